//! What `describe` says of a WebSocket: the upgrade asked, the messages that crossed it, and
//! the notes under a Responses turn read from its messages (a prewarm, only the new items).

use crate::RecordedHop;
use crate::explain::{Case, Explained};
use crate::read::ws_turns::{TurnKind, is_turn, turns_of};
use tracer_wire::hop::ws_message::opcode;
use tracer_wire::hop::{HopState, WsDirection, header_text};
use tracer_wire::safe_text::one_line;

/// The request of a hop that asks to switch to a WebSocket.
pub(crate) fn request(hop: &RecordedHop) -> Option<Explained> {
    let upgrade = header_text(&hop.start.request_headers, "upgrade")?;
    if !upgrade.trim().eq_ignore_ascii_case("websocket") || is_turn(&hop.start) {
        return None;
    }
    let offered = header_text(&hop.start.request_headers, "sec-websocket-extensions")
        .map(|e| format!(" (offers {})", one_line(e)))
        .unwrap_or_default();
    Some(Explained::new(
        Case::WebSocketOpen,
        &[("extensions", offered)],
    ))
}

/// The response of a WebSocket hop once it has closed: what crossed it.
pub(crate) fn response(hop: &RecordedHop) -> Option<Explained> {
    let end = hop.end.as_ref()?;
    let record = end.websocket.as_ref()?;
    if end.state == Some(HopState::InFlight) {
        return None;
    }
    let count = |direction| {
        let messages: Vec<_> = record
            .messages
            .iter()
            .filter(|m| m.direction == direction)
            .collect();
        let bytes: u64 = messages.iter().map(|m| m.size).sum();
        format!(
            "{} ({bytes} bytes)",
            crate::words::plural(messages.len(), "message")
        )
    };
    let turns = turns_of(hop).len();
    let turn_text = match turns {
        0 => String::new(),
        1 => "; 1 Responses turn".to_string(),
        n => format!("; {n} Responses turns"),
    };
    let turn_words = if turns > 0 {
        " Each `response.create` it carried, with the events answering it, is read as a model \
         request and response of its own, numbered where it happened."
            .to_string()
    } else {
        String::new()
    };
    let close = record
        .messages
        .iter()
        .rev()
        .find(|m| m.opcode == opcode::CLOSE)
        .and_then(|m| m.close_status())
        .map(|(code, reason)| {
            let reason = one_line(&reason).into_owned();
            if reason.is_empty() {
                format!("; closed {code}")
            } else {
                format!("; closed {code} {reason}")
            }
        })
        .or_else(|| end.error.as_ref().map(|e| format!("; {}", one_line(e))))
        .unwrap_or_else(|| "; closed without a close frame".to_string());
    let not_listed = if record.not_listed > 0 {
        format!(" ({} more not listed)", record.not_listed)
    } else {
        String::new()
    };
    Some(Explained::new(
        Case::WebSocketClosed,
        &[
            ("sent", count(WsDirection::ToUpstream)),
            ("received", count(WsDirection::ToClient) + &not_listed),
            ("turns", turn_text),
            ("close", close),
            ("turn_words", turn_words),
        ],
    ))
}

/// What the model request's words say of an HTTP turn, untrue of one that continues a response.
const STATELESS: &str =
    " The model remembers nothing between calls: this body is everything it will see.";

/// Under a Responses turn read from a WebSocket: a prewarm, or a turn that sends only the new
/// items and names the response it continues.
pub(crate) fn turn_notes(hop: &RecordedHop, explained: &mut Explained) {
    if !is_turn(&hop.start) {
        return;
    }
    let Some(end) = hop.end.as_ref() else { return };
    let kind = TurnKind::of(&end.request_body.bytes);
    if kind.prewarm {
        explained.note(Case::NoteWsPrewarm, &[]);
    }
    if let Some(previous) = kind.previous_response_id {
        // Not so here: the server keeps the conversation (the note below says how).
        explained.explanation = explained.explanation.replacen(STATELESS, "", 1);
        explained.note(
            Case::NoteWsPrevious,
            &[
                ("items", kind.input_items.to_string()),
                ("previous", one_line(&previous).into_owned()),
            ],
        );
    }
}
