//! The record of one hop: the shape the proxy and wrapper produce, the store keeps and faces read.
//!
//! Plain data with no sqlx, hyper or ratatui types, so every layer can agree on it.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub mod ws_message;
pub use ws_message::{WsDirection, WsMessage, WsRecord};

/// Who is on the upstream side of a route: the agent (called by you), a model or an MCP server
/// (called by the agent), or something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Agent,
    Model,
    Mcp,
    Other,
}

impl Role {
    const ALL: [Role; 4] = [Role::Agent, Role::Model, Role::Mcp, Role::Other];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Model => "model",
            Role::Mcp => "mcp",
            Role::Other => "other",
        }
    }

    /// Who calls a route of this role: the user calls the agent, the agent calls everything else.
    pub fn caller(self) -> &'static str {
        match self {
            Role::Agent => "you",
            _ => "agent",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str() == s)
            .ok_or_else(|| format!("unknown role `{s}` (expected agent, model, mcp or other)"))
    }
}

/// How the hop travelled: an HTTP exchange, or a JSON-RPC pair on a wrapped stdio server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Http,
    Stdio,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Stdio => "stdio",
        }
    }
}

impl FromStr for Transport {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "http" => Ok(Transport::Http),
            "stdio" => Ok(Transport::Stdio),
            other => Err(format!("unknown transport `{other}`")),
        }
    }
}

/// Where a hop is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HopState {
    /// The request arrived; the response has not finished.
    InFlight,
    /// The response was delivered whole (whatever its status code).
    Complete,
    /// The proxy could not get a response (upstream refused, unreachable, timed out or its
    /// certificate refused), or the response's body stopped before its end.
    Failed,
    /// The client went away before the response finished.
    Aborted,
}

impl HopState {
    pub fn as_str(self) -> &'static str {
        match self {
            HopState::InFlight => "in_flight",
            HopState::Complete => "complete",
            HopState::Failed => "failed",
            HopState::Aborted => "aborted",
        }
    }
}

impl FromStr for HopState {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "in_flight" => Ok(HopState::InFlight),
            "complete" => Ok(HopState::Complete),
            "failed" => Ok(HopState::Failed),
            "aborted" => Ok(HopState::Aborted),
            other => Err(format!("unknown hop state `{other}`")),
        }
    }
}

/// One header as it was on the wire; values are bytes because HTTP allows non-UTF-8 values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub value: Vec<u8>,
}

impl Header {
    pub fn new(name: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }

    /// The value as text when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.value).ok()
    }
}

/// Finds a header's value by case-insensitive name.
pub fn header_text<'a>(headers: &'a [Header], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .and_then(Header::text)
}

/// A bounded copy of a body: the first `bytes` of `total_len`, and whether that is all of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BodyCapture {
    pub bytes: Vec<u8>,
    pub total_len: u64,
    pub truncated: bool,
}

impl BodyCapture {
    pub fn whole(bytes: Vec<u8>) -> Self {
        Self {
            total_len: bytes.len() as u64,
            bytes,
            truncated: false,
        }
    }
}

/// One response chunk: when it arrived (ns after the request started) and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub offset_ns: i64,
    pub size: u64,
}

/// How a hop's `run_id` starts when it names the local process that opened the forward-proxy
/// connection (`process:PID:START`) rather than a `tracer run`.
pub const CLIENT_PROCESS_PREFIX: &str = "process:";

/// What is known when a request arrives: enough to show the hop as in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct HopStart {
    /// Globally unique (random), so several processes can write one database.
    pub id: String,
    pub route: String,
    pub role: Role,
    pub transport: Transport,
    /// The client's address (HTTP) or the wrapped server's command (stdio).
    pub peer: String,
    pub method: String,
    /// Path and query as the client asked for them.
    pub path: String,
    /// The upstream URL the request was forwarded to.
    pub url: String,
    pub request_headers: Vec<Header>,
    pub started_unix_ns: i64,
    /// The `tracer run` this hop was recorded during (None outside a run): grouping never puts
    /// hops of two runs in one trace or session.
    pub run_id: Option<String>,
}

/// What is known when the hop ends, successfully or not.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HopEnd {
    pub id: String,
    pub state: Option<HopState>,
    pub status: Option<u16>,
    pub response_headers: Vec<Header>,
    /// Trailer fields after a chunked response body, in wire order (empty when none came).
    pub response_trailers: Vec<Header>,
    pub request_body: BodyCapture,
    pub response_body: BodyCapture,
    pub request_ended_unix_ns: Option<i64>,
    pub response_head_unix_ns: Option<i64>,
    pub response_first_byte_unix_ns: Option<i64>,
    pub response_ended_unix_ns: Option<i64>,
    pub chunks: Vec<Chunk>,
    /// More chunks arrived than were kept (the list is bounded).
    pub chunks_truncated: bool,
    pub error: Option<String>,
    /// How the hop ended when that is worth saying and is no failure: "the client stopped
    /// reading after the last event (response.completed)" for a complete stream whose client
    /// closed before the body's own end.
    pub note: Option<String>,
    /// A WebSocket hop's messages (after its `101`), when it was one.
    pub websocket: Option<WsRecord>,
}

/// What recorders send to the store writer.
#[derive(Debug, Clone, PartialEq)]
pub enum HopEvent {
    Started(Box<HopStart>),
    Ended(Box<HopEnd>),
    /// The request body has been read whole, before the response: grouping can use it live.
    RequestDone(Box<RequestDone>),
    /// A line a wrapped stdio server wrote to stderr.
    ServerLog(Box<ServerLogLine>),
    /// A piece of a big kept body, handed over as soon as it filled.
    BodyPiece(Box<BodyPiece>),
    /// WebSocket messages of an open socket, handed over as they complete.
    WsMessages(Box<WsBatch>),
}

/// Messages of a WebSocket hop that is still open: `record.messages` are the hop's messages
/// `first_seq`, `first_seq + 1`, ...; `not_listed` and `extensions` are as known so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsBatch {
    pub id: String,
    pub first_seq: u64,
    pub record: WsRecord,
}

/// Kept bodies reach the store in pieces of about this size once they grow past it, so a big
/// body never exists whole on the recording path; smaller bodies travel whole with their event.
pub const BODY_PIECE_BYTES: usize = 256 * 1024;

/// Which body of a hop a piece belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodySide {
    Request,
    Response,
}

impl BodySide {
    /// The side as stored (`hop_body_pieces.side`) and journaled.
    pub fn code(self) -> u8 {
        match self {
            BodySide::Request => 0,
            BodySide::Response => 1,
        }
    }

    pub fn from_code(code: u8) -> Option<BodySide> {
        match code {
            0 => Some(BodySide::Request),
            1 => Some(BodySide::Response),
            _ => None,
        }
    }
}

/// One piece of a kept body: the kept body is its pieces in `seq` order, then the bytes its
/// `BodyCapture` still holds (the tail).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyPiece {
    pub id: String,
    pub side: BodySide,
    pub seq: u32,
    pub bytes: Vec<u8>,
}

/// A hop's request, complete while its response is still awaited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestDone {
    pub id: String,
    pub request_body: BodyCapture,
    pub request_ended_unix_ns: i64,
}

/// One stderr line of a wrapped server, kept as that server's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLogLine {
    pub route: String,
    pub logged_unix_ns: i64,
    pub line: String,
}

/// Nanoseconds since the Unix epoch, for `*_unix_ns` columns.
pub fn now_unix_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Where the capturing side (the proxy, `tracer wrap`) hands a hop's events as they happen; the
/// store's recorder implements it. Handing over never waits, and a sink that could not keep an
/// event counts it itself.
pub trait HopSink: Send + Sync {
    /// A hop started. False when it could not be kept: its end is then not worth sending.
    fn start(&self, start: HopStart) -> bool;
    /// A hop's request body was read whole while its response is still awaited.
    fn request_done(&self, done: RequestDone);
    /// The same, from borrowed parts (a sink may keep a big body without an extra copy).
    fn request_read(&self, id: &str, body: &BodyCapture, ended_unix_ns: i64) {
        self.request_done(RequestDone {
            id: id.to_string(),
            request_body: body.clone(),
            request_ended_unix_ns: ended_unix_ns,
        });
    }
    /// A hop whose start was handed over has ended.
    fn end(&self, end: HopEnd);
    /// A wrapped server wrote a line on stderr.
    fn log_line(&self, line: ServerLogLine);
    /// A piece of a hop's kept body (`seq` counts from 0 per side). False when it was not kept:
    /// the capturing side then keeps those bytes, and the rest, in the body it sends at the end.
    fn body_piece(&self, id: &str, side: BodySide, seq: u32, bytes: &[u8]) -> bool {
        let _ = (id, side, seq, bytes);
        false
    }

    /// Messages of an open WebSocket hop. False when they were not kept: the capturing side then
    /// hands them over again with the next batch.
    fn ws_messages(&self, batch: WsBatch) -> bool {
        let _ = batch;
        false
    }

    /// Hands over one event, whichever it is.
    fn send(&self, event: HopEvent) {
        match event {
            HopEvent::Started(start) => {
                self.start(*start);
            }
            HopEvent::Ended(end) => self.end(*end),
            HopEvent::RequestDone(done) => self.request_done(*done),
            HopEvent::ServerLog(line) => self.log_line(*line),
            HopEvent::BodyPiece(piece) => {
                self.body_piece(&piece.id, piece.side, piece.seq, &piece.bytes);
            }
            HopEvent::WsMessages(batch) => {
                self.ws_messages(*batch);
            }
        }
    }
}

/// A sink shared by every connection (the last clone dropped tells the sink nothing more comes).
pub type Sink = std::sync::Arc<dyn HopSink>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_round_trip_and_reject_unknown() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>(), Ok(role));
        }
        assert!("llm".parse::<Role>().is_err());
        assert_eq!(Role::Agent.caller(), "you");
        assert_eq!(Role::Mcp.caller(), "agent");
    }
}
