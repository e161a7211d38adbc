//! The reference agent's own API: `POST /agent {"message"}`, its reply and its error body.
//!
//! The reply lists every tool call the loop made, so a reader sees what happened without a
//! proxy; the error body names the upstream (model or MCP server) and where it was looked for.
//! The same error body is used by the agent's OpenAI-compatible front. Pure: no I/O.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The agent's endpoint.
pub const AGENT_PATH: &str = "/agent";

/// `POST /agent` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRequest {
    pub message: String,
}

/// `POST /agent` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentReply {
    /// The model's final answer, with any `<think>` block removed.
    pub reply: String,
    /// The model's reasoning, kept apart from the answer (absent when the model gave none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Every tool call the model asked for, in order, with what it returned.
    pub tool_calls: Vec<ToolInvocation>,
    /// How many times the model was asked (the final answer included).
    pub steps: u32,
    /// The model that answered, as the model server named it.
    pub model: String,
    /// True when the loop hit `--max-steps` and the answer was asked for without tools.
    #[serde(default)]
    pub step_limit_reached: bool,
}

/// One tool call made on the model's behalf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// The MCP server that ran it; null when the model asked for a tool no server offers.
    pub server: Option<String>,
    /// The tool's name on its server.
    pub name: String,
    /// The arguments as the model gave them (a string when they were not valid JSON).
    pub arguments: Value,
    /// The text the model was given as the result.
    pub output: String,
    pub is_error: bool,
    pub duration_ms: u64,
}

/// Error reply: `{"error": {"type", "message", "upstream"?}}`. Compatible with the OpenAI error
/// envelope, so OpenAI clients show `message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    #[serde(rename = "type")]
    pub kind: ErrorKind,
    pub message: String,
    /// Which upstream failed and where, for upstream errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request body was not what the endpoint takes (400).
    BadRequest,
    /// The request body was too large (413).
    PayloadTooLarge,
    /// No such route (404) or method (405).
    NotFound,
    MethodNotAllowed,
    /// The upstream could not be reached (502).
    UpstreamUnreachable,
    /// The upstream did not answer in time (504).
    UpstreamTimeout,
    /// The upstream answered, but with an error or something unreadable (502).
    UpstreamError,
}

/// Which upstream an error is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upstream {
    /// `model` or `mcp`.
    pub role: String,
    /// The model API (`ollama`, `openai`) or the MCP server's name.
    pub name: String,
    /// Where it was looked for: a URL, or `stdio: <command>`.
    pub address: String,
}

impl ErrorBody {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            error: ErrorDetail {
                kind,
                message: message.into(),
                upstream: None,
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reply_serializes_in_the_documented_shape() {
        let reply = AgentReply {
            reply: "I've added \"buy milk\" to your notes.".into(),
            thinking: None,
            tool_calls: vec![ToolInvocation {
                server: Some("notes".into()),
                name: "append".into(),
                arguments: json!({"content": "buy milk"}),
                output: "Success".into(),
                is_error: false,
                duration_ms: 3,
            }],
            steps: 2,
            model: "qwen2.5:7b".into(),
            step_limit_reached: false,
        };
        assert_eq!(
            serde_json::to_value(&reply).unwrap(),
            json!({"reply": "I've added \"buy milk\" to your notes.",
                   "tool_calls": [{"server": "notes", "name": "append", "arguments": {"content": "buy milk"},
                                   "output": "Success", "is_error": false, "duration_ms": 3}],
                   "steps": 2, "model": "qwen2.5:7b", "step_limit_reached": false})
        );
    }

    #[test]
    fn error_names_the_upstream() {
        let mut body = ErrorBody::new(ErrorKind::UpstreamUnreachable, "connection refused");
        body.error.upstream = Some(Upstream {
            role: "model".into(),
            name: "ollama".into(),
            address: "http://127.0.0.1:11434/api/chat".into(),
        });
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            json!({"error": {"type": "upstream_unreachable", "message": "connection refused",
                   "upstream": {"role": "model", "name": "ollama", "address": "http://127.0.0.1:11434/api/chat"}}})
        );
    }
}
