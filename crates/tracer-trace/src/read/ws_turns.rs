//! The Responses API over a WebSocket (Codex's `response.create` frames) read as model turns:
//! each client `response.create` and the server events answering it (to `response.completed`,
//! `response.failed`, `response.incomplete`, an `error` or the close) become one model hop of
//! their own, read by the `openai.responses` dialect like an HTTP turn. Pure.
//!
//! A turn hop is made from the recorded messages when hops are loaded; it is never stored. Its
//! id is the WebSocket hop's id, `~`, and its turn's number.

use serde_json::Value;

use crate::RecordedHop;
use tracer_wire::hop::ws_message::opcode;
use tracer_wire::hop::{
    BodyCapture, Chunk, Header, HopEnd, HopStart, HopState, WsDirection, WsMessage,
};

pub(crate) use tracer_wire::hop::ws_message::TURN_METHOD;

/// Server events that end a turn.
const TURN_ENDS: [&str; 4] = [
    "response.completed",
    "response.failed",
    "response.incomplete",
    "error",
];

/// Whether a hop is a turn made from a WebSocket's messages.
pub fn is_turn(start: &HopStart) -> bool {
    start.method == TURN_METHOD && start.id.contains('~')
}

/// The hops with, after each WebSocket hop that carried Responses turns, one hop per turn
/// (turn hops already among them, from an imported hop log, are made again from the messages).
pub fn with_turns(hops: Vec<RecordedHop>) -> Vec<RecordedHop> {
    let mut out = Vec::with_capacity(hops.len());
    for hop in hops.into_iter().filter(|hop| !is_turn(&hop.start)) {
        let turns = turns_of(&hop);
        out.push(hop);
        out.extend(turns);
    }
    out
}

/// The turns one hop carried (none unless it is a WebSocket of `response.create` frames).
pub fn turns_of(hop: &RecordedHop) -> Vec<RecordedHop> {
    let Some(record) = hop.end.as_ref().and_then(|e| e.websocket.as_ref()) else {
        return Vec::new();
    };
    let mut turns: Vec<Turn> = Vec::new();
    for message in record.messages.iter().filter(|m| m.opcode == opcode::TEXT) {
        let json: Option<Value> = serde_json::from_slice(&message.data).ok();
        let kind = json
            .as_ref()
            .and_then(|v| v.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("");
        match message.direction {
            WsDirection::ToUpstream if kind == "response.create" => turns.push(Turn {
                request: message,
                events: Vec::new(),
                ended: false,
            }),
            WsDirection::ToClient => {
                if let Some(turn) = turns.last_mut().filter(|t| !t.ended) {
                    turn.events.push(message);
                    turn.ended = TURN_ENDS.contains(&kind);
                }
            }
            WsDirection::ToUpstream => {}
        }
    }
    let open = hop
        .end
        .as_ref()
        .is_some_and(|e| e.state == Some(HopState::InFlight));
    let closed_at = hop.end.as_ref().and_then(|e| e.response_ended_unix_ns);
    turns
        .iter()
        .enumerate()
        .map(|(n, turn)| turn.hop(hop, n + 1, closed_at, open))
        .collect()
}

/// One `response.create` and what answered it.
struct Turn<'a> {
    request: &'a WsMessage,
    events: Vec<&'a WsMessage>,
    ended: bool,
}

impl Turn<'_> {
    /// The turn as a hop; on a socket still `open`, a turn not answered yet is in flight.
    fn hop(
        &self,
        socket: &RecordedHop,
        number: usize,
        closed_at: Option<i64>,
        open: bool,
    ) -> RecordedHop {
        let waiting = open && !self.ended;
        let started = self.request.at_unix_ns;
        let start = HopStart {
            id: format!("{}~{number}", socket.start.id),
            method: TURN_METHOD.to_string(),
            started_unix_ns: started,
            ..socket.start.clone()
        };
        let mut stream = Vec::new();
        let mut chunks = Vec::new();
        for event in &self.events {
            let before = stream.len();
            stream.extend_from_slice(b"data: ");
            stream.extend_from_slice(&event.data);
            stream.extend_from_slice(b"\n\n");
            chunks.push(Chunk {
                offset_ns: event.at_unix_ns.saturating_sub(started),
                size: (stream.len() - before) as u64,
            });
        }
        let kept_whole = self.events.iter().all(|e| !e.truncated());
        let first = self.events.first().map(|e| e.at_unix_ns);
        let last = self.events.last().map(|e| e.at_unix_ns);
        let end = HopEnd {
            id: start.id.clone(),
            state: Some(if self.ended {
                HopState::Complete
            } else if waiting {
                HopState::InFlight
            } else {
                HopState::Aborted
            }),
            status: Some(200),
            response_headers: vec![Header::new("content-type", "text/event-stream")],
            request_body: capture(&self.request.data, self.request.size),
            response_body: BodyCapture {
                total_len: stream.len() as u64,
                truncated: !kept_whole,
                bytes: stream,
            },
            request_ended_unix_ns: Some(started),
            response_head_unix_ns: first,
            response_first_byte_unix_ns: first,
            response_ended_unix_ns: match (self.ended, waiting) {
                (true, _) => last,
                (false, true) => None,
                (false, false) => closed_at.or(last),
            },
            chunks,
            error: (!self.ended && !waiting)
                .then(|| "the WebSocket closed before this turn's response.completed".to_string()),
            ..HopEnd::default()
        };
        RecordedHop {
            read: Default::default(),
            start,
            end: Some(end),
        }
    }
}

fn capture(data: &[u8], size: u64) -> BodyCapture {
    BodyCapture {
        bytes: data.to_vec(),
        total_len: size,
        truncated: (data.len() as u64) < size,
    }
}

/// What a turn's `response.create` says of itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TurnKind {
    /// `generate: false`: load the context, answer nothing.
    pub prewarm: bool,
    /// The response this turn continues; its request then carries only the new input items.
    pub previous_response_id: Option<String>,
    pub input_items: usize,
}

impl TurnKind {
    pub(crate) fn of(request_body: &[u8]) -> TurnKind {
        let request: Value = serde_json::from_slice(request_body).unwrap_or_default();
        TurnKind {
            prewarm: request.get("generate") == Some(&Value::Bool(false)),
            previous_response_id: request
                .get("previous_response_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            input_items: request
                .get("input")
                .and_then(Value::as_array)
                .map_or(0, Vec::len),
        }
    }
}
