//! The OpenAI Responses API (`/v1/responses`): `input` items (messages, `function_call`,
//! `function_call_output`) read as a conversation, and replies plain or as named SSE events
//! (`response.output_text.delta`, `response.function_call_arguments.delta`, ...) reassembled.

use serde_json::Value;

use super::json_util::{content_text, str_field, u64_field, whole};
use super::model_read::{
    error_text, object_body, request_head, sse_json, sse_or_object, stream_reading, streamed_call,
    structured_call, usage,
};
use super::ollama_read::add_text_tool_calls;
use super::{BodyReading, ModelMessage, ModelRequest, ModelResponse, Reading, ToolCall};
use crate::hop::{BodyCapture, Header};

fn function_call(item: &Value) -> Option<ToolCall> {
    Some(structured_call(
        str_field(item, "call_id")
            .or_else(|| str_field(item, "id"))
            .map(str::to_string),
        str_field(item, "name")?.to_string(),
        item.get("arguments"),
    ))
}

/// The conversation an `input` spells: messages, the model's earlier calls, the tools' outputs.
fn conversation(input: Option<&Value>) -> Vec<ModelMessage> {
    let items = match input {
        Some(Value::String(text)) => {
            return vec![ModelMessage {
                role: "user".into(),
                content: text.clone(),
                ..ModelMessage::default()
            }];
        }
        Some(Value::Array(items)) => items,
        _ => return Vec::new(),
    };
    let mut messages: Vec<ModelMessage> = Vec::new();
    for item in items {
        match str_field(item, "type") {
            Some("function_call") => {
                let Some(call) = function_call(item) else {
                    continue;
                };
                // Calls that follow the assistant's own text (or other calls) join its message.
                match messages.last_mut() {
                    Some(last) if last.role == "assistant" => last.tool_calls.push(call),
                    _ => messages.push(ModelMessage {
                        role: "assistant".into(),
                        tool_calls: vec![call],
                        ..ModelMessage::default()
                    }),
                }
            }
            Some("function_call_output") => messages.push(ModelMessage {
                role: "tool".into(),
                content: content_text(item.get("output")),
                tool_call_id: str_field(item, "call_id").map(str::to_string),
                tool_name: str_field(item, "name").map(str::to_string),
                ..ModelMessage::default()
            }),
            Some("message") | None if item.get("role").is_some() => {
                let mut message = ModelMessage {
                    role: str_field(item, "role").unwrap_or_default().to_string(),
                    content: content_text(item.get("content")),
                    ..ModelMessage::default()
                };
                add_text_tool_calls(&mut message);
                messages.push(message);
            }
            _ => {}
        }
    }
    messages
}

/// Function tools are flat here (`{type, name, parameters}`); built-in tools go by their type.
fn tool_names(tools: Option<&Value>) -> Vec<String> {
    let Some(Value::Array(tools)) = tools else {
        return Vec::new();
    };
    tools
        .iter()
        .filter_map(|tool| {
            str_field(tool, "name")
                .or_else(|| tool.get("function").and_then(|f| str_field(f, "name")))
                .or_else(|| str_field(tool, "type"))
                .map(str::to_string)
        })
        .collect()
}

/// Reads a `POST /v1/responses` request.
pub(super) fn request(body: &BodyCapture) -> BodyReading {
    object_body(body, |value| {
        let messages = conversation(value.get("input"));
        let system = str_field(value, "instructions")
            .map(str::to_string)
            .or_else(|| {
                messages
                    .iter()
                    .find(|m| m.role == "system" || m.role == "developer")
                    .map(|m| m.content.clone())
            });
        whole(Reading::ModelRequest(ModelRequest {
            system,
            messages,
            tools: tool_names(value.get("tools")),
            ..request_head(value, false)
        }))
    })
}

/// A whole `response` object: its output items as one assistant message.
fn reply_of(response: &Value, reply: &mut ModelResponse) {
    if let Some(model) = str_field(response, "model") {
        reply.model = Some(model.to_string());
    }
    let status = str_field(response, "status");
    reply.finish_reason = status.map(str::to_string);
    reply.usage = usage(response.get("usage"), "input_tokens", "output_tokens");
    if reply.error.is_none() {
        reply.error = error_text(response);
    }
    let Some(Value::Array(output)) = response.get("output") else {
        return;
    };
    let mut message = ModelMessage {
        role: "assistant".into(),
        ..ModelMessage::default()
    };
    for item in output {
        match str_field(item, "type") {
            Some("message") => message.content.push_str(&content_text(item.get("content"))),
            Some("function_call") => message.tool_calls.extend(function_call(item)),
            Some("reasoning") => message
                .thinking
                .push_str(&content_text(item.get("summary"))),
            _ => {}
        }
    }
    add_text_tool_calls(&mut message);
    reply.message = message;
}

/// Reads a reply: a `response` object, or its stream of events.
pub(super) fn response(headers: &[Header], body: &BodyCapture) -> BodyReading {
    sse_or_object(headers, body, stream, |value| {
        let mut reply = ModelResponse {
            records: 1,
            ..ModelResponse::default()
        };
        reply_of(value, &mut reply);
        if reply.message.role.is_empty() {
            reply.message.role = "assistant".into();
        }
        whole(Reading::ModelResponse(Box::new(reply)))
    })
}

/// A function call being assembled from its events, keyed by its item id.
struct PartialCall {
    item_id: String,
    output_index: Option<u64>,
    call: ToolCall,
    arguments: String,
}

fn stream(body: &[u8]) -> BodyReading {
    let sse = sse_json(body);
    let mut reply = sse.reply();
    let mut calls: Vec<PartialCall> = Vec::new();
    let mut last: Option<Value> = None;
    let mut ended = false;
    for event in &sse.events {
        let data = &event.data;
        let item_id = str_field(data, "item_id").unwrap_or_default();
        let output_index = u64_field(data, "output_index");
        let find = |calls: &mut Vec<PartialCall>| {
            calls
                .iter_mut()
                .rev()
                .position(|c| {
                    (!item_id.is_empty() && c.item_id == item_id)
                        || (item_id.is_empty()
                            && output_index.is_some()
                            && c.output_index == output_index)
                })
                .map(|from_end| calls.len() - 1 - from_end)
        };
        match event.kind() {
            Some("response.created" | "response.in_progress") => {
                if let Some(model) = data.get("response").and_then(|r| str_field(r, "model")) {
                    reply.model = Some(model.to_string());
                }
            }
            Some("response.output_item.added" | "response.output_item.done") => {
                let item = data.get("item").cloned().unwrap_or_default();
                if str_field(&item, "type") != Some("function_call") {
                    continue;
                }
                let Some(call) = function_call(&item) else {
                    continue;
                };
                let id = str_field(&item, "id").unwrap_or_default().to_string();
                let done_arguments = str_field(&item, "arguments").unwrap_or_default();
                match calls.iter_mut().find(|c| c.item_id == id) {
                    Some(known) => {
                        if !done_arguments.is_empty() {
                            known.arguments = done_arguments.to_string();
                        }
                        known.call.name = call.name;
                        known.call.id = call.id;
                    }
                    None => calls.push(PartialCall {
                        item_id: id,
                        output_index,
                        call,
                        arguments: done_arguments.to_string(),
                    }),
                }
            }
            Some("response.output_text.delta") => {
                reply
                    .message
                    .content
                    .push_str(str_field(data, "delta").unwrap_or_default());
            }
            Some("response.reasoning_summary_text.delta" | "response.reasoning_text.delta") => {
                reply
                    .message
                    .thinking
                    .push_str(str_field(data, "delta").unwrap_or_default());
            }
            Some("response.function_call_arguments.delta") => {
                if let Some(i) = find(&mut calls) {
                    calls[i]
                        .arguments
                        .push_str(str_field(data, "delta").unwrap_or_default());
                }
            }
            Some("response.function_call_arguments.done") => {
                if let (Some(i), Some(arguments)) = (find(&mut calls), str_field(data, "arguments"))
                {
                    calls[i].arguments = arguments.to_string();
                }
            }
            Some("response.completed" | "response.failed" | "response.incomplete") => {
                ended = true;
                last = data.get("response").cloned();
            }
            Some("error") => {
                reply.error = str_field(data, "message")
                    .map(str::to_string)
                    .or_else(|| error_text(data));
            }
            _ => {}
        }
    }
    let streamed_text = std::mem::take(&mut reply.message.content);
    let streamed_thinking = std::mem::take(&mut reply.message.thinking);
    if let Some(last) = &last {
        reply_of(last, &mut reply);
    }
    // What streamed is what the client saw; the final object fills in what did not stream.
    if !streamed_text.is_empty() || reply.message.content.is_empty() {
        reply.message.content = streamed_text;
    }
    if !streamed_thinking.is_empty() {
        reply.message.thinking = streamed_thinking;
    }
    if !calls.is_empty() {
        reply.message.tool_calls = calls
            .into_iter()
            .map(|partial| streamed_call(partial.call.id, partial.call.name, partial.arguments))
            .collect();
    }
    add_text_tool_calls(&mut reply.message);
    let ended = ended || reply.error.is_some();
    stream_reading(reply, ended, sse.bad, "response event")
}
