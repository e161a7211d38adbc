//! What one record of a stream says: an end event by its `type` or SSE name, Ollama's `done`,
//! a Gemini `finishReason`; and where a JSON text is (its depth, whether its top value closed).

use serde_json::Value;

use super::EndEvent;

pub(super) fn named_end(kind: &str) -> Option<EndEvent> {
    match kind {
        "response.completed" => Some(EndEvent::ResponseCompleted),
        "response.failed" => Some(EndEvent::ResponseFailed),
        "response.incomplete" => Some(EndEvent::ResponseIncomplete),
        "message_stop" => Some(EndEvent::MessageStop),
        _ => None,
    }
}

/// The end event one JSON record is, by its `type`, Ollama's `done`, or a Gemini candidate's
/// `finishReason` (also inside Code Assist's `response` wrapper), or a JSON-RPC response.
pub(super) fn json_end(value: &Value) -> Option<EndEvent> {
    if is_jsonrpc_answer(value) {
        return Some(EndEvent::JsonRpcAnswer);
    }
    if let Some(event) = value
        .get("type")
        .and_then(Value::as_str)
        .and_then(named_end)
    {
        return Some(event);
    }
    if value.get("done").and_then(Value::as_bool) == Some(true) {
        return Some(EndEvent::OllamaDone);
    }
    let candidates = value
        .get("candidates")
        .or_else(|| value.get("response").and_then(|r| r.get("candidates")))
        .and_then(Value::as_array)?;
    candidates
        .iter()
        .any(|c| c.get("finishReason").is_some_and(|r| !r.is_null()))
        .then_some(EndEvent::FinishReason)
}

/// A JSON-RPC 2.0 response (an `id`, a `result` or an `error`, no `method`): the answer a POST's
/// SSE stream was opened for; once it has passed, the client has what it asked for.
fn is_jsonrpc_answer(value: &Value) -> bool {
    value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && value.get("method").is_none()
        && value.get("id").is_some_and(|id| !id.is_null())
        && (value.get("result").is_some() || value.get("error").is_some())
}

/// The value of a `"type"` given as the first key of a JSON object, from its first bytes.
pub(super) fn first_type(head: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(head).ok()?;
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix("\"type\"")?
        .trim_start()
        .strip_prefix(':')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    rest.split('"').next()
}

/// Where a JSON text is: its depth outside strings, how many top-level values opened, and
/// whether the last one has closed.
#[derive(Debug, Default, Clone)]
pub(super) struct JsonDepth {
    depth: u32,
    pub values: u32,
    in_string: bool,
    escaped: bool,
    pub closed: bool,
}

impl JsonDepth {
    pub(super) fn push(&mut self, byte: u8) {
        if self.in_string {
            match byte {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => self.in_string = false,
                _ => {}
            }
            return;
        }
        match byte {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                if self.depth == 0 {
                    self.values = self.values.saturating_add(1);
                }
                self.depth = self.depth.saturating_add(1);
                self.closed = false;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                self.closed = self.depth == 0;
            }
            _ if byte.is_ascii_whitespace() || byte == b',' => {}
            _ if self.depth == 0 => self.closed = false,
            _ => {}
        }
    }
}
