//! MCP's JSON-RPC messages as the messages of a trace: every message inside an SSE stream (a POST's
//! answer, the GET stream) is a message of its own at its arrival time; a one-line stdio
//! message, a notification's 202 and the answer of a withdrawn call are not invented; and who
//! sent each message (host or server) comes from the protocol, not from the hop's arrow.

use std::collections::HashMap;

use super::message_words;
pub use super::pairing::Side;
use super::pairing::{Asked, Pairing, cancelled_id, progress_token};
use crate::RecordedHop;
use crate::explain::Explained;
use crate::read::explain_context::ExplainContext;
use crate::read::mcp_outcome::{mcp_reading, withdrawn};
use crate::read::numbering::{Direction, NumberedMessage};
use crate::read::transport_moves::TransportMove;
use tracer_wire::dialect::{Dialect, HopReading, JsonRpcKind, McpMessage, sse_message_offsets};
use tracer_wire::hop::{HopState, Transport};

/// One message of a trace: a numbered arrow of a hop, and which JSON-RPC message of the hop's
/// SSE answer it is (None: the hop's own request or its one answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub message: NumberedMessage,
    pub part: Option<usize>,
}

/// Whether the hop's request line was written by the server (a stdio hop it started).
pub(crate) fn server_started(hop: &RecordedHop) -> bool {
    hop.start.transport == Transport::Stdio && hop.start.path == "server→client"
}

/// Whether a hop's answer is a message of its own; false for the answers nobody sent.
fn answer_was_sent(hop: &RecordedHop, reading: &HopReading) -> bool {
    if reading.dialect != Dialect::Mcp {
        return true;
    }
    let Some(end) = hop.end.as_ref() else {
        return true;
    };
    match hop.start.transport {
        // One line, no answer: a notification, a stray answer, a line that is not JSON-RPC; and
        // a call the host withdrew (the server must not answer it).
        Transport::Stdio => {
            let one_line = end.state == Some(HopState::Complete)
                && end.response_head_unix_ns.is_none()
                && end.response_body.total_len == 0;
            !(one_line || withdrawn(hop))
        }
        Transport::Http => {
            let sent_no_request = mcp_reading(Some(&reading.request.reading)).is_some_and(|m| {
                !m.messages.is_empty() && m.messages.iter().all(|m| m.kind != JsonRpcKind::Request)
            });
            let acknowledged = end.status.is_some_and(|s| (200..300).contains(&s))
                && end.response_body.total_len == 0;
            let stream_of_messages = TransportMove::of(&hop.start)
                == Some(TransportMove::ServerStream)
                && mcp_reading(reading.response.as_ref().map(|r| &r.reading))
                    .is_some_and(|m| m.sse && !m.messages.is_empty());
            // A POST's stream that closed before any reply (the call was withdrawn): nothing came.
            let no_reply = end.state == Some(HopState::Complete)
                && mcp_reading(reading.response.as_ref().map(|r| &r.reading))
                    .is_some_and(|m| m.sse && m.reply().is_none());
            !(stream_of_messages || no_reply || (sent_no_request && acknowledged))
        }
    }
}

/// The messages of an SSE answer that come before its reply (all of them on the GET stream),
/// with the times they arrived.
fn stream_parts(hop: &RecordedHop, reading: &HopReading) -> Vec<(i64, usize)> {
    let (Some(end), Some(mcp)) = (
        hop.end.as_ref(),
        mcp_reading(reading.response.as_ref().map(|r| &r.reading)),
    ) else {
        return Vec::new();
    };
    if reading.dialect != Dialect::Mcp || !mcp.sse {
        return Vec::new();
    }
    let reply = if TransportMove::of(&hop.start).is_some() {
        None
    } else {
        mcp.messages
            .iter()
            .position(|m| matches!(m.kind, JsonRpcKind::Result | JsonRpcKind::Error))
    };
    let offsets = sse_message_offsets(&end.response_body.bytes, &end.chunks);
    let start = hop.start.started_unix_ns;
    let last = end
        .response_ended_unix_ns
        .or(end.response_head_unix_ns)
        .unwrap_or(start);
    (0..mcp.messages.len())
        .filter(|&i| Some(i) != reply)
        .map(|i| {
            let at = offsets
                .get(i)
                .copied()
                .flatten()
                .map_or(last, |offset| start.saturating_add(offset));
            (at, i)
        })
        .collect()
}

/// The trace's messages: the numbered arrows of its hops, less the answers nobody sent, plus
/// every message of their SSE streams merged in by arrival time; numbered again 1..M.
pub(crate) fn slots(
    hops: &[RecordedHop],
    readings: &[HopReading],
    numbered: &[NumberedMessage],
) -> Vec<Slot> {
    let base = numbered.iter().filter(|m| {
        m.direction == Direction::Request
            || answer_was_sent(&hops[m.hop_index], &readings[m.hop_index])
    });
    let mut parts: Vec<Slot> = Vec::new();
    for (index, hop) in hops.iter().enumerate() {
        for (at_ns, part) in stream_parts(hop, &readings[index]) {
            parts.push(Slot {
                message: NumberedMessage {
                    number: 0,
                    hop_index: index,
                    direction: Direction::Response,
                    at_ns,
                },
                part: Some(part),
            });
        }
    }
    parts.sort_by_key(|s| (s.message.at_ns, s.message.hop_index, s.part));
    let mut out: Vec<Slot> = Vec::with_capacity(numbered.len() + parts.len());
    let mut parts = parts.into_iter().peekable();
    let mut started = vec![false; hops.len()];
    for message in base {
        while let Some(part) = parts.peek() {
            // A part never comes before its own hop's request.
            if part.message.at_ns < message.at_ns && started[part.message.hop_index] {
                out.extend(parts.next());
            } else {
                break;
            }
        }
        started[message.hop_index] = true;
        out.push(Slot {
            message: *message,
            part: None,
        });
    }
    out.extend(parts);
    for (position, slot) in out.iter_mut().enumerate() {
        slot.message.number = position + 1;
    }
    out
}

/// The JSON-RPC message a slot shows, and who sent it.
pub(crate) fn message_of<'a>(
    hop: &RecordedHop,
    reading: &'a HopReading,
    slot: &Slot,
) -> Option<(&'a McpMessage, Side)> {
    if reading.dialect != Dialect::Mcp {
        return None;
    }
    let requester = if server_started(hop) {
        Side::Server
    } else {
        Side::Host
    };
    match (slot.message.direction, slot.part) {
        (Direction::Request, _) => {
            let mcp = mcp_reading(Some(&reading.request.reading))?;
            let message = mcp.request().or_else(|| mcp.messages.first())?;
            Some((message, requester))
        }
        (Direction::Response, part) => {
            let mcp = mcp_reading(reading.response.as_ref().map(|r| &r.reading))?;
            let message = match part {
                Some(part) => mcp.messages.get(part)?,
                None => mcp.reply()?,
            };
            Some((message, requester.other()))
        }
    }
}

/// The JSON-RPC message an explained message shows, and who sent it (None: not MCP, or a
/// transport move's answer with no JSON-RPC in it).
pub fn message_of_explained<'a>(
    hop: &RecordedHop,
    reading: &'a HopReading,
    message: &crate::ExplainedMessage,
) -> Option<(&'a McpMessage, Side)> {
    let slot = Slot {
        message: NumberedMessage {
            number: message.number,
            hop_index: message.hop_index,
            direction: message.direction,
            at_ns: message.at_unix_ns,
        },
        part: message.part,
    };
    message_of(hop, reading, &slot)
}

/// Who pairs with whom across a trace: requests by sender and id, progress tokens, withdrawals.
#[derive(Debug, Default)]
pub(crate) struct McpTrace {
    asked: HashMap<(Side, String, String), Asked>,
    /// Each hop's own request, for its answer when the id cannot tell (an error with id null).
    hop_requests: HashMap<usize, Asked>,
    /// The trace's model calls: (started, ended, number of the request, route).
    model_calls: Vec<(i64, i64, usize, String)>,
    progress: HashMap<(String, String), Asked>,
    /// Each withdrawn request's number and the number of the message that withdrew it.
    withdrawals: Vec<(usize, usize)>,
}

impl McpTrace {
    /// Pairing state for one trace, knowing its model calls (`numbers`: each hop's number).
    pub(crate) fn of(hops: &[RecordedHop], readings: &[HopReading], numbers: &[usize]) -> Self {
        let model_calls = hops
            .iter()
            .zip(readings)
            .zip(numbers)
            .filter(|((_, reading), _)| reading.dialect.is_model_chat())
            .filter_map(|((hop, _), &number)| {
                let end = hop.end.as_ref()?.response_ended_unix_ns?;
                Some((
                    hop.start.started_unix_ns,
                    end,
                    number,
                    hop.start.route.clone(),
                ))
            })
            .collect();
        Self {
            model_calls,
            ..Self::default()
        }
    }

    /// The model call made between a sampling request and the host's answer to it.
    fn model_call_between(&self, asked_ns: i64, answered_ns: i64) -> Option<(usize, &str)> {
        self.model_calls
            .iter()
            .find(|(start, end, _, _)| *start >= asked_ns && *end <= answered_ns)
            .map(|(_, _, number, route)| (*number, route.as_str()))
    }

    /// Each withdrawn request's number and the number of the message that withdrew it, in
    /// the order withdrawn (`withdrawn::name_withdrawn` names them).
    pub(crate) fn withdrawals(&self) -> &[(usize, usize)] {
        &self.withdrawals
    }

    /// Explains an MCP slot (None: not an MCP message, or one the general words tell: a
    /// transport move, a failed or aborted hop); remembers what later messages pair with.
    pub(crate) fn explain(
        &mut self,
        hop: &RecordedHop,
        reading: &HopReading,
        slot: &Slot,
        context: &ExplainContext,
    ) -> Option<(Explained, Side)> {
        if slot.part.is_none() && TransportMove::of(&hop.start).is_some() {
            return None;
        }
        if slot.message.direction == Direction::Response
            && hop.end.as_ref().is_some_and(|e| {
                matches!(
                    e.state,
                    Some(HopState::Failed | HopState::Aborted | HopState::InFlight)
                )
            })
        {
            return None;
        }
        let (message, side) = message_of(hop, reading, slot)?;
        let route = hop.start.route.clone();
        let id = message.id_text();
        let is_answer = matches!(message.kind, JsonRpcKind::Result | JsonRpcKind::Error);
        let own_answer = slot.message.direction == Direction::Response && slot.part.is_none();
        let answered = id
            .as_ref()
            .filter(|_| is_answer)
            .and_then(|id| self.asked.get(&(side.other(), route.clone(), id.clone())))
            .or_else(|| {
                self.hop_requests
                    .get(&slot.message.hop_index)
                    .filter(|_| is_answer && own_answer)
            });
        let progress_of = progress_token(message)
            .filter(|_| message.kind == JsonRpcKind::Notification)
            .and_then(|token| self.progress.get(&(route.clone(), token)));
        let withdrawn =
            cancelled_id(message).and_then(|id| self.asked.get(&(side, route.clone(), id)));
        let model_call = answered
            .filter(|a| a.method == "sampling/createMessage")
            .and_then(|a| self.model_call_between(a.at_ns, slot.message.at_ns));
        let pairing = Pairing {
            model_call,
            answered,
            progress_of,
            withdrawn,
            transport: hop.start.transport,
            model_in_trace: context.model_dialect.is_some(),
            status: hop.end.as_ref().and_then(|e| e.status),
            acknowledged: slot.message.direction == Direction::Request
                && hop.start.transport == Transport::Http
                && !answer_was_sent(hop, reading),
        };
        let explained = message_words::explain(message, side, &pairing, context);
        let number = slot.message.number;
        if is_answer
            && let Some(id) = &id
            && let Some(asked) = self
                .asked
                .get_mut(&(side.other(), route.clone(), id.clone()))
        {
            asked.answered_in.get_or_insert(number);
        }
        if let Some(cancelled) = cancelled_id(message)
            && let Some(asked) = self.asked.get_mut(&(side, route.clone(), cancelled))
            && asked.withdrawn_in.is_none()
            && asked.answered_in.is_none()
            && side == Side::Host
        {
            asked.withdrawn_in = Some(number);
            let withdrawn = asked.number;
            self.withdrawals.push((withdrawn, number));
            // Its progress token's record too: progress after this is named as such.
            for kept in self.progress.values_mut() {
                if kept.number == withdrawn {
                    kept.withdrawn_in = Some(number);
                }
            }
        }
        if message.kind == JsonRpcKind::Request
            && let Some(id) = id
        {
            let asked = Asked {
                number,
                method: message.method.clone().unwrap_or_default(),
                withdrawn_in: None,
                answered_in: None,
                at_ns: slot.message.at_ns,
            };
            if let Some(token) = progress_token(message) {
                self.progress.insert((route.clone(), token), asked.clone());
            }
            if slot.message.direction == Direction::Request {
                self.hop_requests
                    .insert(slot.message.hop_index, asked.clone());
            }
            self.asked.insert((side, route, id), asked);
        }
        Some((explained, side))
    }
}
