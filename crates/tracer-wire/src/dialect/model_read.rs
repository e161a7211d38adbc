//! What the model-chat readers share: body preambles, structured calls, errors, usage, SSE events.

use serde_json::Value;

use super::json_util::{
    Framing, arguments_from, framing, malformed, parse_lenient, sse_events, str_field, whole,
};
use super::{
    BodyReading, Integrity, ModelMessage, ModelRequest, ModelResponse, Reading, ToolCall,
    ToolCallForm, Usage,
};
use crate::hop::{BodyCapture, Header};

/// Reads a body that must be one JSON object: empty reads as empty, anything else as malformed.
pub(super) fn object_body(
    body: &BodyCapture,
    read: impl FnOnce(&Value) -> BodyReading,
) -> BodyReading {
    if body.bytes.trim_ascii().is_empty() {
        return whole(Reading::Empty);
    }
    match parse_lenient(&body.bytes).filter(Value::is_object) {
        Some(value) => read(&value),
        None => malformed(&body.bytes, "not a JSON object"),
    }
}

/// Reads a reply that is an SSE stream (by `stream`) or one JSON object (by `read`).
pub(super) fn sse_or_object(
    headers: &[Header],
    body: &BodyCapture,
    stream: fn(&[u8]) -> BodyReading,
    read: impl FnOnce(&Value) -> BodyReading,
) -> BodyReading {
    if !body.bytes.trim_ascii().is_empty() && framing(headers, &body.bytes) == Framing::Sse {
        return stream(&body.bytes);
    }
    object_body(body, read)
}

/// A request's `model`, and its `stream` flag (`stream_default` when absent); the caller fills
/// in the rest.
pub(super) fn request_head(value: &Value, stream_default: bool) -> ModelRequest {
    ModelRequest {
        model: str_field(value, "model").map(str::to_string),
        stream: value
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(stream_default),
        answer_format: answer_format(value),
        ..ModelRequest::default()
    }
}

/// The structured answer a request asks for, in the field its API names: Anthropic's
/// `output_config.format`, Chat Completions' `response_format`, Responses' `text.format`:
/// `JSON (title)`; None for free text.
fn answer_format(value: &Value) -> Option<String> {
    let format = value
        .get("output_config")
        .and_then(|c| c.get("format"))
        .or_else(|| value.get("response_format"))
        .or_else(|| value.get("text").and_then(|t| t.get("format")))
        .filter(|f| f.is_object())?;
    let kind = str_field(format, "type")?;
    if !kind.starts_with("json") {
        return None;
    }
    let schema = format
        .get("schema")
        .or_else(|| format.get("json_schema").and_then(|j| j.get("schema")));
    let fields: Vec<&str> = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.keys().map(String::as_str).collect())
        .unwrap_or_default();
    Some(if fields.is_empty() {
        "JSON".to_string()
    } else {
        format!("JSON ({})", fields.join(", "))
    })
}

/// A structured tool call; `arguments` as [`arguments_from`] reads them.
pub(super) fn structured_call(
    id: Option<String>,
    name: String,
    arguments: Option<&Value>,
) -> ToolCall {
    let (arguments, arguments_invalid) = arguments_from(arguments);
    ToolCall {
        id,
        name,
        arguments,
        arguments_invalid,
        form: ToolCallForm::Structured,
    }
}

/// A structured tool call whose arguments arrived as JSON text in pieces (a stream).
pub(super) fn streamed_call(id: Option<String>, name: String, arguments: String) -> ToolCall {
    structured_call(id, name, Some(&Value::String(arguments)))
}

/// The text of an `error` field: a string as is, else its `message`, else its JSON; None when
/// the field is absent or null.
pub(super) fn error_text(value: &Value) -> Option<String> {
    let error = value.get("error").filter(|e| !e.is_null())?;
    Some(match error {
        Value::String(s) => s.clone(),
        other => str_field(other, "message")
            .map(str::to_string)
            .unwrap_or_else(|| other.to_string()),
    })
}

/// Token counts under the given keys of an OpenAI-style `usage` object, cached and reasoning
/// details included (none when there is no object).
pub(super) fn usage(value: Option<&Value>, input_key: &str, output_key: &str) -> Usage {
    super::usage_read::openai(value, input_key, output_key)
}

/// One SSE event whose data is JSON.
pub(super) struct JsonEvent {
    pub name: Option<String>,
    pub data: Value,
}

impl JsonEvent {
    /// The event's type: the data's `type` field, else the SSE event name.
    pub(super) fn kind(&self) -> Option<&str> {
        str_field(&self.data, "type").or(self.name.as_deref())
    }
}

/// The events of an SSE body read as JSON one at a time (an event's parsed JSON is dropped
/// before the next is read, so reassembly holds the body and what it builds, not every event);
/// the counts are complete once the events are all taken.
pub(super) struct SseJson<'a> {
    events: crate::stream::BodyRecords<'a, crate::stream::SseDecoder>,
    /// Events read as JSON so far.
    pub records: usize,
    /// Events that are not JSON (a cut-off last one is not counted).
    pub bad: usize,
    /// A `data: [DONE]` marker came.
    pub done: bool,
}

impl SseJson<'_> {
    /// An assistant reply, still empty, for a stream: its `records` are set by `stream_reading`'s
    /// caller from [`SseJson::records`] once the events are read.
    pub(super) fn reply(&self) -> ModelResponse {
        ModelResponse {
            message: ModelMessage {
                role: "assistant".into(),
                ..ModelMessage::default()
            },
            streamed: true,
            ..ModelResponse::default()
        }
    }
}

impl Iterator for SseJson<'_> {
    type Item = JsonEvent;

    fn next(&mut self) -> Option<JsonEvent> {
        for (event, is_tail) in self.events.by_ref() {
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            if data == "[DONE]" {
                self.done = true;
                continue;
            }
            match parse_lenient(data.as_bytes()) {
                Some(data) => {
                    self.records += 1;
                    return Some(JsonEvent {
                        name: event.event,
                        data,
                    });
                }
                None => self.bad += usize::from(!is_tail),
            }
        }
        None
    }
}

/// Reads an SSE body's events as JSON, skipping empty ones and the `[DONE]` marker.
pub(super) fn sse_json(body: &[u8]) -> SseJson<'_> {
    SseJson {
        events: sse_events(body),
        records: 0,
        bad: 0,
        done: false,
    }
}

/// A reassembled streamed reply and its integrity: malformed when none of its records came or
/// `bad` of them could not be read (`unit` names a record: `message event`, `line`), cut off
/// when it never `ended`.
pub(super) fn stream_reading(
    reply: ModelResponse,
    ended: bool,
    bad: usize,
    unit: &str,
) -> BodyReading {
    let integrity = if reply.records == 0 && !ended {
        Integrity::Malformed(format!("no {unit}s"))
    } else if bad > 0 {
        Integrity::Malformed(format!("{bad} {unit}(s) are not JSON"))
    } else if !ended {
        Integrity::CutOff
    } else {
        Integrity::Whole
    };
    BodyReading {
        reading: Reading::ModelResponse(std::sync::Arc::new(reply)),
        integrity,
    }
}
