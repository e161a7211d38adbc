//! The OpenAI Responses API (`/v1/responses`): `input` items (messages, `reasoning`,
//! `function_call`, `function_call_output`) read as a conversation, `instructions` and developer
//! messages as the system prompt, tools inside `namespace` entries counted each; replies plain
//! here; replies, plain or streamed, in `responses_stream`.

use serde_json::Value;

use super::anatomy_read::{json_bytes, message_system_parts};
use super::json_util::{content_text, str_field, whole};
use super::model_read::{error_text, object_body, request_head, structured_call, usage};
use super::ollama_read::add_text_tool_calls;
use super::{
    BodyReading, ModelMessage, ModelRequest, ModelResponse, Reading, SystemPart, SystemSource,
    ToolCall, ToolDef,
};
use crate::hop::BodyCapture;

pub(super) fn function_call(item: &Value) -> Option<ToolCall> {
    Some(structured_call(
        str_field(item, "call_id")
            .or_else(|| str_field(item, "id"))
            .map(str::to_string),
        str_field(item, "name")?.to_string(),
        item.get("arguments"),
    ))
}

/// A `reasoning` item's readable part (its summary, else its text) and the bytes of its
/// encrypted part, joined to a message.
fn add_reasoning(item: &Value, message: &mut ModelMessage) {
    let mut text = content_text(item.get("summary"));
    if text.is_empty() {
        text = content_text(item.get("content"));
    }
    if !text.is_empty() {
        if !message.thinking.is_empty() {
            message.thinking.push('\n');
        }
        message.thinking.push_str(&text);
    }
    if let Some(encrypted) = str_field(item, "encrypted_content").filter(|e| !e.is_empty()) {
        *message.hidden_reasoning_bytes.get_or_insert(0) += encrypted.len();
    }
}

/// An assistant message that so far holds only reasoning, ready for what the model did next.
fn only_reasoning(message: &ModelMessage) -> bool {
    message.role == "assistant" && message.content.is_empty() && message.tool_calls.is_empty()
}

/// The conversation an `input` spells: messages, the model's reasoning and earlier calls, the
/// tools' outputs.
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
            Some("reasoning") => match messages.last_mut() {
                Some(last) if only_reasoning(last) => add_reasoning(item, last),
                _ => {
                    let mut message = ModelMessage {
                        role: "assistant".into(),
                        ..ModelMessage::default()
                    };
                    add_reasoning(item, &mut message);
                    messages.push(message);
                }
            },
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
                let role = str_field(item, "role").unwrap_or_default();
                let content = content_text(item.get("content"));
                let message = match messages.last_mut() {
                    // The text that follows the model's reasoning is the same turn.
                    Some(last) if role == "assistant" && only_reasoning(last) => {
                        last.content = content;
                        last
                    }
                    _ => {
                        messages.push(ModelMessage {
                            role: role.to_string(),
                            content,
                            ..ModelMessage::default()
                        });
                        let Some(last) = messages.last_mut() else {
                            continue;
                        };
                        last
                    }
                };
                add_text_tool_calls(message);
            }
            _ => {}
        }
    }
    messages
}

/// Every callable tool: function tools are flat (`{type, name, parameters}`), a `namespace`
/// entry holds tools of its own (Codex puts each MCP server's tools in one), built-in tools go
/// by their type.
fn tool_defs(tools: Option<&Value>) -> Vec<ToolDef> {
    let Some(Value::Array(tools)) = tools else {
        return Vec::new();
    };
    let mut defs = Vec::new();
    for tool in tools {
        if let (Some("namespace"), Some(Value::Array(inner))) =
            (str_field(tool, "type"), tool.get("tools"))
        {
            let namespace = str_field(tool, "name").map(str::to_string);
            defs.extend(inner.iter().filter_map(|entry| {
                Some(ToolDef {
                    name: tool_name(entry)?.to_string(),
                    namespace: namespace.clone(),
                    bytes: json_bytes(entry),
                })
            }));
            continue;
        }
        if let Some(name) = tool_name(tool) {
            defs.push(ToolDef {
                name: name.to_string(),
                namespace: None,
                bytes: json_bytes(tool),
            });
        }
    }
    defs
}

fn tool_name(tool: &Value) -> Option<&str> {
    str_field(tool, "name")
        .or_else(|| tool.get("function").and_then(|f| str_field(f, "name")))
        .or_else(|| str_field(tool, "type"))
}

/// The reasoning the request asks for: `reasoning.effort` and `reasoning.summary`.
fn thinking_mode(value: &Value) -> Option<String> {
    let reasoning = value.get("reasoning").filter(|r| r.is_object())?;
    let words: Vec<String> = ["effort", "summary"]
        .iter()
        .filter_map(|key| str_field(reasoning, key).map(|v| format!("{key} {v}")))
        .collect();
    Some(if words.is_empty() {
        "on".to_string()
    } else {
        words.join(", ")
    })
}

/// Reads a `POST /v1/responses` request.
pub(super) fn request(body: &BodyCapture) -> BodyReading {
    object_body(body, |value| {
        let messages = conversation(value.get("input"));
        let instructions = str_field(value, "instructions").filter(|i| !i.is_empty());
        let system = instructions.map(str::to_string).or_else(|| {
            messages
                .iter()
                .find(|m| m.role == "system" || m.role == "developer")
                .map(|m| m.content.clone())
        });
        let mut system_parts: Vec<SystemPart> = instructions
            .map(|text| SystemPart {
                source: SystemSource::Instructions,
                bytes: text.len(),
                cache_marked: false,
            })
            .into_iter()
            .collect();
        system_parts.extend(message_system_parts(&messages));
        let tool_defs = tool_defs(value.get("tools"));
        whole(Reading::ModelRequest(ModelRequest {
            system: system.map(std::sync::Arc::from),
            tools: tool_defs.iter().map(|t| t.name.clone()).collect(),
            messages: messages.into_iter().map(std::sync::Arc::new).collect(),
            system_parts,
            tool_defs,
            thinking_mode: thinking_mode(value),
            ..request_head(value, false)
        }))
    })
}

/// A whole `response` object: its output items as one assistant message.
pub(super) fn reply_of(response: &Value, reply: &mut ModelResponse) {
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
    reply.message = output_message(output);
}

/// The output items of a response as one assistant message.
pub(super) fn output_message(output: &[Value]) -> ModelMessage {
    let mut message = ModelMessage {
        role: "assistant".into(),
        ..ModelMessage::default()
    };
    for item in output {
        match str_field(item, "type") {
            Some("message") => message.content.push_str(&content_text(item.get("content"))),
            Some("function_call") => message.tool_calls.extend(function_call(item)),
            Some("reasoning") => add_reasoning(item, &mut message),
            _ => {}
        }
    }
    add_text_tool_calls(&mut message);
    message
}

/// Reads a reply that is one `response` object (a stream is read by `responses_stream`).
pub(super) fn response_object(value: &Value) -> BodyReading {
    let mut reply = ModelResponse {
        records: 1,
        ..ModelResponse::default()
    };
    reply_of(value, &mut reply);
    if reply.message.role.is_empty() {
        reply.message.role = "assistant".into();
    }
    whole(Reading::ModelResponse(std::sync::Arc::new(reply)))
}
