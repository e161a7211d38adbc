//! Ollama `/api/chat` and `/api/generate`: requests, and replies plain or as NDJSON streams.

use serde_json::Value;

use super::anatomy_read::{field_parts, flat_tool_defs, message_system_parts};
use super::json_util::{
    content_text, malformed, ndjson_lines, parse_lenient, str_field, text, u64_field, whole,
};
use super::model_read::{error_text, object_body, request_head, stream_reading, structured_call};
use super::{
    BodyReading, ModelMessage, ModelRequest, ModelResponse, OllamaTimings, Reading, SystemSource,
    ToolCall, ToolCallForm, Usage, text_tool_call,
};
use crate::hop::{BodyCapture, Header};

/// Reads a message shaped like Ollama's or OpenAI's (`role`, `content`, `tool_calls`, …).
pub(super) fn chat_message(value: &Value) -> ModelMessage {
    let mut message = ModelMessage {
        role: text(value, "role"),
        content: content_text(value.get("content")),
        thinking: ["thinking", "reasoning", "reasoning_content"]
            .iter()
            .find_map(|key| str_field(value, key))
            .unwrap_or_default()
            .to_string(),
        tool_calls: structured_calls(value.get("tool_calls")),
        tool_call_id: str_field(value, "tool_call_id").map(str::to_string),
        tool_name: str_field(value, "tool_name")
            .or_else(|| str_field(value, "name"))
            .map(str::to_string),
        is_error: false,
        ..ModelMessage::default()
    };
    add_text_tool_calls(&mut message);
    message
}

/// An assistant message without structured calls may carry calls written as text.
pub(super) fn add_text_tool_calls(message: &mut ModelMessage) {
    if message.role == "assistant" && message.tool_calls.is_empty() {
        message.tool_calls = text_tool_call::find(&message.content);
    }
}

/// `tool_calls: [{id?, function: {name, arguments}}]`; arguments may be an object or a string.
pub(super) fn structured_calls(value: Option<&Value>) -> Vec<ToolCall> {
    let Some(Value::Array(items)) = value else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let function = item.get("function").unwrap_or(item);
            Some(structured_call(
                str_field(item, "id").map(str::to_string),
                str_field(function, "name")?.to_string(),
                function.get("arguments"),
            ))
        })
        .collect()
}

/// Tool names offered in `tools: [{type:"function", function:{name}}]` (or `{name}`).
pub(super) fn tool_names(value: Option<&Value>) -> Vec<String> {
    let Some(Value::Array(items)) = value else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|tool| {
            str_field(tool.get("function").unwrap_or(tool), "name").map(str::to_string)
        })
        .collect()
}

/// Reads an `/api/chat` or `/api/generate` request (`stream` defaults to true on Ollama).
pub(super) fn request(body: &BodyCapture) -> BodyReading {
    object_body(body, |value| {
        let mut messages: Vec<ModelMessage> = match value.get("messages") {
            Some(Value::Array(items)) => items.iter().map(chat_message).collect(),
            _ => Vec::new(),
        };
        if let Some(prompt) = str_field(value, "prompt") {
            messages.push(ModelMessage {
                role: "user".into(),
                content: prompt.into(),
                ..ModelMessage::default()
            });
        }
        let system = str_field(value, "system").map(str::to_string).or_else(|| {
            messages
                .iter()
                .find(|m| m.role == "system")
                .map(|m| m.content.clone())
        });
        let mut system_parts = field_parts(value.get("system"), SystemSource::SystemField);
        system_parts.extend(message_system_parts(&messages));
        whole(Reading::ModelRequest(ModelRequest {
            system: system.map(std::sync::Arc::from),
            system_parts,
            messages: messages.into_iter().map(std::sync::Arc::new).collect(),
            tools: tool_names(value.get("tools")),
            tool_defs: flat_tool_defs(value.get("tools")),
            thinking_mode: match value.get("think") {
                Some(Value::Bool(true)) => Some("think".into()),
                Some(Value::String(level)) => Some(format!("think {level}")),
                _ => None,
            },
            ..request_head(value, true)
        }))
    })
}

/// Reads a reply: one JSON object or an NDJSON stream, reassembled into one assistant message.
pub(super) fn response(_headers: &[Header], body: &BodyCapture) -> BodyReading {
    if body.bytes.trim_ascii().is_empty() {
        return whole(Reading::Empty);
    }
    let mut reply = ModelResponse {
        message: ModelMessage {
            role: "assistant".into(),
            ..ModelMessage::default()
        },
        ..ModelResponse::default()
    };
    let mut done = false;
    let mut bad_lines = 0usize;
    let mut take = |record: Option<Value>, may_be_cut: bool| match record.filter(Value::is_object) {
        Some(record) => {
            reply.records += 1;
            done |= absorb(&mut reply, &record);
        }
        None => bad_lines += usize::from(!may_be_cut),
    };
    // `stream:false` replies are one JSON document (possibly pretty-printed); streams are NDJSON,
    // read a line at a time.
    match parse_lenient(&body.bytes) {
        Some(value) => take(Some(value), false),
        None => {
            for (line, unterminated) in ndjson_lines(&body.bytes) {
                take(parse_lenient(&line), unterminated);
            }
        }
    }
    if reply.records == 0 {
        return malformed(&body.bytes, "no JSON object in the reply");
    }
    reply.streamed = reply.records > 1;
    add_text_tool_calls(&mut reply.message);
    let ended = done || reply.error.is_some();
    stream_reading(reply, ended, bad_lines, "line")
}

/// Folds one reply object into the assembled reply; true when it is the final (`done`) one.
fn absorb(reply: &mut ModelResponse, record: &Value) -> bool {
    if let Some(error) = error_text(record) {
        reply.error = Some(error);
        return false;
    }
    if reply.model.is_none() {
        reply.model = str_field(record, "model").map(str::to_string);
    }
    if let Some(message) = record.get("message") {
        let part = chat_message(message);
        reply.message.content.push_str(&part.content);
        reply.message.thinking.push_str(&part.thinking);
        reply.message.tool_calls.extend(
            part.tool_calls
                .into_iter()
                .filter(|c| c.form == ToolCallForm::Structured),
        );
    }
    if let Some(piece) = str_field(record, "response") {
        reply.message.content.push_str(piece);
    }
    if let Some(piece) = str_field(record, "thinking") {
        reply.message.thinking.push_str(piece);
    }
    let done = record.get("done").and_then(Value::as_bool).unwrap_or(false);
    if done {
        reply.finish_reason = str_field(record, "done_reason").map(str::to_string);
        let timings = OllamaTimings {
            total_ns: u64_field(record, "total_duration"),
            load_ns: u64_field(record, "load_duration"),
            prompt_eval_count: u64_field(record, "prompt_eval_count"),
            prompt_eval_ns: u64_field(record, "prompt_eval_duration"),
            eval_count: u64_field(record, "eval_count"),
            eval_ns: u64_field(record, "eval_duration"),
        };
        if timings != OllamaTimings::default() {
            reply.timings = Some(timings);
        }
        reply.usage = Usage {
            input_tokens: timings.prompt_eval_count,
            output_tokens: timings.eval_count,
            cache_inside_input: true,
            ..Usage::default()
        };
    }
    done
}
