//! What an MCP message pairs with inside a trace: who sent it, the request an answer answers,
//! a progress notification reports on or a `notifications/cancelled` withdraws.

use serde_json::Value;

use super::fields::param;
use tracer_wire::dialect::{JsonRpcKind, McpMessage};
use tracer_wire::hop::Transport;

/// Who sent a message: the host (the MCP client) or the MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Host,
    Server,
}

impl Side {
    pub(crate) fn other(self) -> Side {
        match self {
            Side::Host => Side::Server,
            Side::Server => Side::Host,
        }
    }
}

/// A request seen earlier in the trace: its message number and method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    pub number: usize,
    pub method: String,
    /// The number of the message that withdrew it (`notifications/cancelled`), once seen.
    pub withdrawn_in: Option<usize>,
    /// The number of its answer, once seen.
    pub answered_in: Option<usize>,
    /// When it was sent.
    pub at_ns: i64,
}

/// What a message pairs with, and where it travels.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pairing<'a> {
    /// The request an answer answers.
    pub answered: Option<&'a Asked>,
    /// The request a progress notification reports on.
    pub progress_of: Option<&'a Asked>,
    /// The request a `notifications/cancelled` withdraws.
    pub withdrawn: Option<&'a Asked>,
    pub transport: Transport,
    pub model_in_trace: bool,
    pub status: Option<u16>,
    /// An HTTP POST the server took with a bodiless 2xx (a notification, an answer).
    pub acknowledged: bool,
    /// On the host's answer to a sampling request: the model call the host made for it (its
    /// number and route), when the host's model traffic is recorded too.
    pub model_call: Option<(usize, &'a str)>,
}

/// The progress token a request names (`params._meta.progressToken`) or a progress
/// notification reports on (`params.progressToken`), as text.
pub(crate) fn progress_token(message: &McpMessage) -> Option<String> {
    let value = match message.kind {
        JsonRpcKind::Request => param(message, "_meta")?.get("progressToken")?,
        _ => param(message, "progressToken")?,
    };
    Some(value.to_string())
}

/// The id a `notifications/cancelled` withdraws, as `McpMessage::id_text` would write it.
pub(crate) fn cancelled_id(message: &McpMessage) -> Option<String> {
    if message.method.as_deref() != Some("notifications/cancelled") {
        return None;
    }
    match param(message, "requestId")? {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The number and method of the request an answer answers, as its words' values (`?` when
/// unknown).
pub(crate) fn asked_values(asked: Option<&Asked>) -> [(&'static str, String); 2] {
    [
        (
            "number",
            asked.map_or_else(|| "?".into(), |a| a.number.to_string()),
        ),
        (
            "method",
            asked.map_or_else(|| "?".into(), |a| a.method.clone()),
        ),
    ]
}
