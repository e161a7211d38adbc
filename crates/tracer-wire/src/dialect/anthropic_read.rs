//! Anthropic Messages: requests with content blocks, replies plain or as named SSE events.

use serde_json::Value;

use super::anatomy_read::{cache_marked, field_parts, flat_tool_defs, message_system_parts};
use super::json_util::{content_text, str_field, u64_field, whole};
use super::model_read::{
    error_text, object_body, request_head, sse_json, sse_or_object, stream_reading, streamed_call,
    structured_call,
};
use super::ollama_read::add_text_tool_calls;
use super::{
    BodyReading, ModelMessage, ModelRequest, ModelResponse, Reading, SystemSource, ToolCall, Usage,
};
use crate::hop::{BodyCapture, Header};

fn tool_use(block: &Value) -> Option<ToolCall> {
    Some(structured_call(
        str_field(block, "id").map(str::to_string),
        str_field(block, "name")?.to_string(),
        block.get("input"),
    ))
}

/// Thinking text, and the bytes of the signature that seals it, joined to a message.
fn add_thinking(message: &mut ModelMessage, thinking: &str, signature: &str) {
    if !thinking.is_empty() {
        if !message.thinking.is_empty() {
            message.thinking.push('\n');
        }
        message.thinking.push_str(thinking);
    }
    if !signature.is_empty() {
        *message.thinking_signature_bytes.get_or_insert(0) += signature.len();
    }
}

/// A `redacted_thinking` block: reasoning only the API can read, counted by its bytes.
fn add_hidden(message: &mut ModelMessage, data: &str) {
    *message.hidden_reasoning_bytes.get_or_insert(0) += data.len();
}

/// The thinking the request asks for: `thinking.type` (with its budget) and any effort.
fn thinking_mode(value: &Value) -> Option<String> {
    let mut words = Vec::new();
    if let Some(thinking) = value.get("thinking") {
        let kind = str_field(thinking, "type").unwrap_or("?");
        words.push(match u64_field(thinking, "budget_tokens") {
            Some(budget) => format!("{kind}, budget {budget} tokens"),
            None => kind.to_string(),
        });
    }
    if let Some(effort) = value
        .get("output_config")
        .and_then(|c| str_field(c, "effort"))
    {
        words.push(format!("effort {effort}"));
    }
    (!words.is_empty()).then(|| words.join(", "))
}

/// `cache_control` marks on the system blocks, the tools and the messages' content blocks.
fn cache_marks(value: &Value) -> usize {
    let marked_in = |list: Option<&Value>| match list {
        Some(Value::Array(items)) => items.iter().filter(|item| cache_marked(item)).count(),
        _ => 0,
    };
    let in_messages: usize = match value.get("messages") {
        Some(Value::Array(messages)) => messages
            .iter()
            .map(|m| usize::from(cache_marked(m)) + marked_in(m.get("content")))
            .sum(),
        _ => 0,
    };
    marked_in(value.get("system")) + marked_in(value.get("tools")) + in_messages
}

/// One request message; its `tool_result` blocks become separate `tool` messages after it.
fn messages_of(value: &Value) -> Vec<ModelMessage> {
    let role = str_field(value, "role").unwrap_or_default().to_string();
    let mut message = ModelMessage {
        role,
        ..ModelMessage::default()
    };
    let mut results = Vec::new();
    match value.get("content") {
        Some(Value::String(s)) => message.content = s.clone(),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::new();
            for block in blocks {
                match str_field(block, "type") {
                    Some("text") => texts.push(str_field(block, "text").unwrap_or_default()),
                    Some("thinking") => add_thinking(
                        &mut message,
                        str_field(block, "thinking").unwrap_or_default(),
                        str_field(block, "signature").unwrap_or_default(),
                    ),
                    Some("redacted_thinking") => {
                        add_hidden(&mut message, str_field(block, "data").unwrap_or_default())
                    }
                    Some("tool_use") => message.tool_calls.extend(tool_use(block)),
                    Some("tool_result") => results.push(ModelMessage {
                        role: "tool".into(),
                        content: content_text(block.get("content")),
                        tool_call_id: str_field(block, "tool_use_id").map(str::to_string),
                        is_error: block
                            .get("is_error")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                        ..ModelMessage::default()
                    }),
                    _ => {}
                }
            }
            message.content = texts.join("\n");
        }
        _ => {}
    }
    add_text_tool_calls(&mut message);
    let keep_message =
        !(!results.is_empty() && message.content.is_empty() && message.tool_calls.is_empty());
    let mut out = Vec::new();
    if keep_message {
        out.push(message);
    }
    out.extend(results);
    out
}

/// Reads a `/v1/messages` request (`stream` defaults to false).
pub(super) fn request(body: &BodyCapture) -> BodyReading {
    object_body(body, |value| {
        let messages = match value.get("messages") {
            Some(Value::Array(items)) => items.iter().flat_map(messages_of).collect(),
            _ => Vec::new(),
        };
        let system = value
            .get("system")
            .map(|s| content_text(Some(s)))
            .filter(|s| !s.is_empty());
        let tool_defs = flat_tool_defs(value.get("tools"));
        let mut system_parts = field_parts(value.get("system"), SystemSource::SystemField);
        system_parts.extend(message_system_parts(&messages));
        whole(Reading::ModelRequest(ModelRequest {
            system: system.map(std::sync::Arc::from),
            tools: tool_defs.iter().map(|t| t.name.clone()).collect(),
            messages: messages.into_iter().map(std::sync::Arc::new).collect(),
            system_parts,
            tool_defs,
            cache_marks: cache_marks(value),
            thinking_mode: thinking_mode(value),
            ..request_head(value, false)
        }))
    })
}

/// Lays a `usage` object over what earlier events said: every bucket it names wins.
fn usage(value: Option<&Value>, into: &mut Usage) {
    into.update(&super::usage_read::anthropic(value));
}

/// Reads a reply: a `message` object, or the `message_start` … `message_stop` event stream.
pub(super) fn response(headers: &[Header], body: &BodyCapture) -> BodyReading {
    sse_or_object(headers, body, stream, |value| {
        let mut message = messages_of(value).into_iter().next().unwrap_or_default();
        message.role = "assistant".into();
        let mut reply_usage = Usage::default();
        usage(value.get("usage"), &mut reply_usage);
        whole(Reading::ModelResponse(std::sync::Arc::new(ModelResponse {
            model: str_field(value, "model").map(str::to_string),
            message,
            finish_reason: str_field(value, "stop_reason").map(str::to_string),
            usage: reply_usage,
            records: 1,
            error: error_text(value),
            ..ModelResponse::default()
        })))
    })
}

/// One content block being assembled from its deltas.
#[derive(Default)]
struct Block {
    index: u64,
    kind: String,
    text: String,
    id: Option<String>,
    name: String,
    partial_json: String,
    signature: String,
}

fn stream(body: &[u8]) -> BodyReading {
    let mut sse = sse_json(body);
    let mut reply = sse.reply();
    let mut blocks: Vec<Block> = Vec::new();
    let mut stopped = false;
    for event in sse.by_ref() {
        let data = &event.data;
        let index = u64_field(data, "index").unwrap_or(0);
        match event.kind() {
            Some("message_start") => {
                let message = data.get("message");
                reply.model = message
                    .and_then(|m| str_field(m, "model"))
                    .map(str::to_string);
                usage(message.and_then(|m| m.get("usage")), &mut reply.usage);
            }
            Some("content_block_start") => {
                let start = data.get("content_block").cloned().unwrap_or_default();
                blocks.push(Block {
                    index,
                    kind: str_field(&start, "type").unwrap_or_default().to_string(),
                    text: ["text", "thinking", "data"]
                        .iter()
                        .find_map(|key| str_field(&start, key))
                        .unwrap_or_default()
                        .to_string(),
                    id: str_field(&start, "id").map(str::to_string),
                    name: str_field(&start, "name").unwrap_or_default().to_string(),
                    partial_json: String::new(),
                    signature: str_field(&start, "signature")
                        .unwrap_or_default()
                        .to_string(),
                });
            }
            Some("content_block_delta") => {
                let delta = data.get("delta").cloned().unwrap_or_default();
                if let Some(block) = blocks.iter_mut().rev().find(|b| b.index == index) {
                    for key in ["text", "thinking"] {
                        block
                            .text
                            .push_str(str_field(&delta, key).unwrap_or_default());
                    }
                    block
                        .partial_json
                        .push_str(str_field(&delta, "partial_json").unwrap_or_default());
                    block
                        .signature
                        .push_str(str_field(&delta, "signature").unwrap_or_default());
                }
            }
            Some("message_delta") => {
                if let Some(reason) = data.get("delta").and_then(|d| str_field(d, "stop_reason")) {
                    reply.finish_reason = Some(reason.to_string());
                }
                usage(data.get("usage"), &mut reply.usage);
            }
            Some("message_stop") => stopped = true,
            Some("error") => reply.error = error_text(data),
            _ => {}
        }
    }
    for block in blocks {
        match block.kind.as_str() {
            "text" if reply.message.content.is_empty() => reply.message.content = block.text,
            "text" => reply.message.content.push_str(&block.text),
            "thinking" => add_thinking(&mut reply.message, &block.text, &block.signature),
            "redacted_thinking" => add_hidden(&mut reply.message, &block.text),
            "tool_use" => {
                let call = streamed_call(block.id, block.name, block.partial_json);
                reply.message.tool_calls.push(call);
            }
            _ => {}
        }
    }
    add_text_tool_calls(&mut reply.message);
    let ended = stopped || reply.error.is_some();
    reply.records = sse.records;
    stream_reading(reply, ended, sse.bad, "message event")
}
