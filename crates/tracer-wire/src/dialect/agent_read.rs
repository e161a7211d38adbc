//! The reference agent's API: `POST /agent {"message"}` and its reply (text plus tool calls made).

use serde_json::Value;

use super::json_util::{content_text, malformed, parse_lenient, str_field, whole};
use super::model_read::{error_text, structured_call};
use super::{AgentReply, AgentRequest, BodyReading, Reading, ToolCall};
use crate::hop::BodyCapture;

/// Reads `{"message": "..."}`.
pub(super) fn request(body: &BodyCapture) -> BodyReading {
    if body.bytes.trim_ascii().is_empty() {
        return whole(Reading::Empty);
    }
    let Some(value) = parse_lenient(&body.bytes) else {
        return malformed(&body.bytes, "not JSON");
    };
    match str_field(&value, "message") {
        Some(message) => whole(Reading::AgentRequest(AgentRequest {
            message: message.to_string(),
        })),
        None => whole(Reading::Json(value)),
    }
}

/// The fields a reply's text may be under, most specific first.
const REPLY_KEYS: [&str; 5] = ["reply", "response", "answer", "content", "message"];
/// The fields a reply's list of tool calls may be under.
const CALL_KEYS: [&str; 4] = ["tool_calls", "toolCalls", "invocations", "tools"];

/// Reads the agent's reply permissively: its text, the tool calls it lists, or its error.
pub(super) fn response(body: &BodyCapture) -> BodyReading {
    if body.bytes.trim_ascii().is_empty() {
        return whole(Reading::Empty);
    }
    let Some(value) = parse_lenient(&body.bytes) else {
        return malformed(&body.bytes, "not JSON");
    };
    let reply = REPLY_KEYS
        .iter()
        .find_map(|key| value.get(*key).filter(|v| v.is_string() || v.is_array()))
        .map(|v| content_text(Some(v)));
    let error = error_text(&value);
    if reply.is_none() && error.is_none() {
        return whole(Reading::Json(value));
    }
    let tool_calls = CALL_KEYS
        .iter()
        .find_map(|key| value.get(*key).and_then(Value::as_array))
        .map(|items| items.iter().filter_map(call).collect())
        .unwrap_or_default();
    whole(Reading::AgentReply(AgentReply {
        reply: reply.unwrap_or_default(),
        tool_calls,
        error,
    }))
}

fn call(item: &Value) -> Option<ToolCall> {
    let function = item.get("function").unwrap_or(item);
    let name = str_field(function, "name")
        .or_else(|| str_field(function, "tool"))?
        .to_string();
    Some(structured_call(
        str_field(item, "id").map(str::to_string),
        name,
        function.get("arguments").or_else(|| function.get("args")),
    ))
}
