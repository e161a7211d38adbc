//! The words MCP explanations share: who sent a message, how a request pairs with its answer,
//! the quoted fields, and the answer told on its own when its request is not in the trace.

use serde_json::Value;

use super::describe_mcp_hop::{mcp_request, mcp_response};
use super::explain::{Case, Explained, McpCase, plural, shorten};
use super::explain_context::ExplainContext;
use crate::hop::Transport;
use crate::wire::dialect::{JsonRpcKind, McpMessage, McpReading};

/// How long a quoted text may be in a summary line.
pub(super) const QUOTE: usize = 72;

/// Who sent a message: the host (the MCP client) or the MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Host,
    Server,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Host => Side::Server,
            Side::Server => Side::Host,
        }
    }
}

/// A request seen earlier in the trace: its message number and method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
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
pub struct Pairing<'a> {
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

pub(super) fn param<'a>(message: &'a McpMessage, key: &str) -> Option<&'a Value> {
    message.params.as_ref().and_then(|p| p.get(key))
}

pub(super) fn param_text(message: &McpMessage, key: &str) -> String {
    param(message, key)
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "?".into())
}

pub(super) fn field_text(value: Option<&Value>, key: &str) -> String {
    value
        .and_then(|v| v.get(key))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "?".into())
}

/// The progress token a request names (`params._meta.progressToken`) or a progress
/// notification reports on (`params.progressToken`), as text.
pub fn progress_token(message: &McpMessage) -> Option<String> {
    let value = match message.kind {
        JsonRpcKind::Request => param(message, "_meta")?.get("progressToken")?,
        _ => param(message, "progressToken")?,
    };
    Some(value.to_string())
}

/// The id a `notifications/cancelled` withdraws, as `McpMessage::id_text` would write it.
pub fn cancelled_id(message: &McpMessage) -> Option<String> {
    if message.method.as_deref() != Some("notifications/cancelled") {
        return None;
    }
    match param(message, "requestId")? {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

pub(super) fn asked_values(asked: Option<&Asked>) -> [(&'static str, String); 2] {
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

pub(super) fn mcp(case: McpCase, values: &[(&str, String)]) -> Explained {
    Explained::new(Case::Mcp(case), values)
}

pub(super) fn names(
    items: Option<&Value>,
    keys: &[&str],
    one: &str,
) -> [(&'static str, String); 2] {
    let items = items.and_then(Value::as_array).cloned().unwrap_or_default();
    let listed: Vec<String> = items
        .iter()
        .filter_map(|item| {
            keys.iter()
                .find_map(|k| item.get(*k).and_then(Value::as_str))
        })
        .map(str::to_string)
        .collect();
    [
        ("count", plural(items.len(), one)),
        ("names", shorten(&listed.join(", "), QUOTE)),
    ]
}

pub(super) fn status_message(value: Option<&Value>) -> String {
    value
        .and_then(|v| v.get("statusMessage"))
        .and_then(Value::as_str)
        .map_or_else(String::new, |m| format!(" (\"{}\")", shorten(m, 50)))
}

pub(super) fn lone_request(message: &McpMessage) -> Explained {
    mcp_request(&McpReading {
        messages: vec![message.clone()],
        batch: false,
        sse: false,
        era: None,
    })
}

pub(super) fn lone_answer(message: &McpMessage, context: &ExplainContext) -> Explained {
    mcp_response(
        &McpReading {
            messages: vec![message.clone()],
            batch: false,
            sse: false,
            era: None,
        },
        context,
    )
}
