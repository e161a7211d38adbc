//! OpenAI Chat Completions: requests, and replies plain or as SSE with `arguments` fragments.

use serde_json::Value;

use super::anatomy_read::{flat_tool_defs, message_system_parts};
use super::json_util::{str_field, u64_field, whole};
use super::model_read::{
    error_text, object_body, request_head, sse_json, sse_or_object, stream_reading, streamed_call,
    usage,
};
use super::ollama_read::{add_text_tool_calls, chat_message, tool_names};
use super::{BodyReading, ModelMessage, ModelRequest, ModelResponse, Reading, Usage};
use crate::hop::{BodyCapture, Header};

/// Reads a `/v1/chat/completions` request (`stream` defaults to false here).
pub(super) fn request(body: &BodyCapture) -> BodyReading {
    object_body(body, |value| {
        let messages: Vec<ModelMessage> = match value.get("messages") {
            Some(Value::Array(items)) => items.iter().map(chat_message).collect(),
            _ => Vec::new(),
        };
        let system = messages
            .iter()
            .find(|m| m.role == "system" || m.role == "developer")
            .map(|m| m.content.clone());
        let tool_defs = flat_tool_defs(value.get("tools"));
        whole(Reading::ModelRequest(ModelRequest {
            system: system.map(std::sync::Arc::from),
            system_parts: message_system_parts(&messages),
            messages: messages.into_iter().map(std::sync::Arc::new).collect(),
            tools: tool_names(value.get("tools")),
            tool_defs,
            thinking_mode: str_field(value, "reasoning_effort").map(|e| format!("effort {e}")),
            ..request_head(value, false)
        }))
    })
}

/// Reads a reply: a `chat.completion` object, or a `chat.completion.chunk` SSE stream.
pub(super) fn response(headers: &[Header], body: &BodyCapture) -> BodyReading {
    sse_or_object(headers, body, stream, |value| {
        let choice = value.get("choices").and_then(|c| c.get(0));
        let mut message = choice
            .and_then(|c| c.get("message"))
            .map(chat_message)
            .unwrap_or_default();
        if message.role.is_empty() {
            message.role = "assistant".into();
        }
        whole(Reading::ModelResponse(std::sync::Arc::new(ModelResponse {
            model: str_field(value, "model").map(str::to_string),
            message,
            finish_reason: choice
                .and_then(|c| str_field(c, "finish_reason"))
                .map(str::to_string),
            usage: usage(value.get("usage"), "prompt_tokens", "completion_tokens"),
            records: 1,
            error: error_text(value),
            ..ModelResponse::default()
        })))
    })
}

/// A tool call being assembled from `tool_calls[].index` fragments.
struct PartialCall {
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

fn stream(body: &[u8]) -> BodyReading {
    let mut sse = sse_json(body);
    let mut reply = sse.reply();
    let mut calls: Vec<PartialCall> = Vec::new();
    for event in sse.by_ref() {
        let chunk = &event.data;
        if let Some(error) = error_text(chunk) {
            reply.error = Some(error);
        }
        if reply.model.is_none() {
            reply.model = str_field(chunk, "model").map(str::to_string);
        }
        let chunk_usage = usage(chunk.get("usage"), "prompt_tokens", "completion_tokens");
        if chunk_usage != Usage::default() {
            reply.usage = chunk_usage;
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            continue;
        };
        if let Some(reason) = str_field(choice, "finish_reason") {
            reply.finish_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            continue;
        };
        if let Some(piece) = str_field(delta, "content") {
            reply.message.content.push_str(piece);
        }
        for key in ["reasoning", "reasoning_content"] {
            if let Some(piece) = str_field(delta, key) {
                reply.message.thinking.push_str(piece);
            }
        }
        if let Some(Value::Array(fragments)) = delta.get("tool_calls") {
            for fragment in fragments {
                absorb_fragment(&mut calls, fragment);
            }
        }
    }
    reply.message.tool_calls = calls
        .into_iter()
        .map(|call| streamed_call(call.id, call.name, call.arguments))
        .collect();
    add_text_tool_calls(&mut reply.message);
    reply.records = sse.records;
    stream_reading(reply, sse.done, sse.bad, "chat.completion.chunk event")
}

/// Joins one `tool_calls[]` fragment: keyed by `index`, and by `id` when a server reuses an index.
/// Only `arguments` accumulate: a server that repeats the name (and id) in every fragment, as
/// llama.cpp's does, names the same call, not `get_phonenumberget_phonenumber…`.
fn absorb_fragment(calls: &mut Vec<PartialCall>, fragment: &Value) {
    let index = u64_field(fragment, "index").unwrap_or(0);
    let id = str_field(fragment, "id").map(str::to_string);
    let function = fragment.get("function");
    let name = function.and_then(|f| str_field(f, "name"));
    let arguments = function
        .and_then(|f| str_field(f, "arguments"))
        .unwrap_or_default();
    let existing = calls
        .iter_mut()
        .rev()
        .find(|call| call.index == index && (id.is_none() || call.id.is_none() || call.id == id));
    match existing {
        Some(call) => {
            if call.id.is_none() {
                call.id = id;
            }
            if let Some(name) = name
                && name != call.name
            {
                call.name.push_str(name);
            }
            call.arguments.push_str(arguments);
        }
        None => calls.push(PartialCall {
            index,
            id,
            name: name.unwrap_or_default().to_string(),
            arguments: arguments.to_string(),
        }),
    }
}
