//! The hop log's entries beyond one request and one answer per hop: the messages of an SSE
//! answer (`part`, no bytes of their own) and the answers no one sent (`unsent`), which are kept
//! so that every hop can be rebuilt whole, but are not shown.

use super::message_entry::message_entry;
use super::{Body, MessageEntry, Timings};
use tracer_trace::{Direction, ExplainedMessage, RecordedHop, explain_response};
use tracer_wire::hop::{BodyCapture, HopState};
use tracer_wire::safe_text::one_line;

impl MessageEntry {
    /// An answer kept for the record though never sent: it shares its request's number.
    pub fn is_unsent(&self) -> bool {
        self.unsent
    }

    /// This entry as message `part` of its hop's SSE answer: its time, no headers or body.
    pub(super) fn into_part(mut self, part: Option<usize>) -> Self {
        if part.is_some() {
            self.part = part;
            self.headers.clear();
            self.body = Body::encode(&BodyCapture::default());
            self.timings = Timings {
                ended_unix_ns: Some(self.at_unix_ns),
                ..Timings::default()
            };
        }
        self
    }
}

/// The entries, plus an unsent answer for each ended hop whose answer is no message of its own,
/// each right after the entries of its hop's number.
pub(super) fn with_unsent_answers(
    mut entries: Vec<MessageEntry>,
    hops: &[RecordedHop],
    explained: &[ExplainedMessage],
    bodies: super::message_entry::Bodies,
) -> Vec<MessageEntry> {
    for (index, hop) in hops.iter().enumerate() {
        let Some(end) = hop
            .end
            .as_ref()
            .filter(|e| e.state != Some(HopState::InFlight))
        else {
            continue;
        };
        let answered = explained.iter().any(|m| {
            m.hop_index == index && m.direction == Direction::Response && m.part.is_none()
        });
        let Some(request) = explained
            .iter()
            .find(|m| m.hop_index == index && m.direction == Direction::Request)
        else {
            continue;
        };
        if answered {
            continue;
        }
        let words = explain_response(hop, &hop.reading());
        let (from, to) = (request.to.clone(), request.from.clone());
        let at = end
            .response_ended_unix_ns
            .or(end.response_head_unix_ns)
            .or(end.request_ended_unix_ns)
            .unwrap_or(hop.start.started_unix_ns);
        let message = ExplainedMessage {
            number: request.number,
            direction: Direction::Response,
            from,
            to,
            at_unix_ns: at,
            head: String::new(),
            case: words.case,
            summary: one_line(&words.summary).into_owned(),
            explanation: one_line(&words.explanation).into_owned(),
            tokens: None,
            part: None,
            ..request.clone()
        };
        let mut entry = message_entry(&message, hop, bodies);
        entry.unsent = true;
        entries.push(entry);
    }
    entries.sort_by_key(|e| e.number);
    entries
}
