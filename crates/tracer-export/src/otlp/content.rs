//! Opt-in span content (`--otlp-content`): conversations in the GenAI JSON shapes
//! (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`), built from
//! the recorded bodies as read by their dialect.

use serde_json::{Value, json};

use tracer_wire::dialect::{ModelMessage, ModelRequest, ModelResponse};

/// `gen_ai.input.messages`: the request's conversation, system prompt excluded.
pub(crate) fn input_messages(request: &ModelRequest) -> String {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .filter(|m| m.role != "system")
        .map(|m| message(m, None))
        .collect();
    Value::Array(messages).to_string()
}

/// `gen_ai.system_instructions`: the system prompt (its own field, or the system messages).
pub(crate) fn system_instructions(request: &ModelRequest) -> Option<String> {
    let mut texts: Vec<&str> = request.system.as_deref().into_iter().collect();
    texts.extend(
        request
            .messages
            .iter()
            .filter(|m| m.role == "system")
            .map(|m| m.content.as_str()),
    );
    let parts: Vec<Value> = texts
        .into_iter()
        .filter(|t| !t.is_empty())
        .map(|t| json!({ "type": "text", "content": t }))
        .collect();
    (!parts.is_empty()).then(|| Value::Array(parts).to_string())
}

/// `gen_ai.output.messages`: the model's answer with its finish reason.
pub(crate) fn output_messages(answer: &ModelResponse) -> String {
    let reason = finish_reason(
        answer.finish_reason.as_deref(),
        !answer.message.tool_calls.is_empty(),
        answer.error.is_some(),
    );
    json!([message(&answer.message, Some(reason))]).to_string()
}

/// One text message in and out, for the agent API (`{"message"}` → `{"reply"}`).
pub(crate) fn text_message(role: &str, text: &str, finish: Option<&str>) -> String {
    let mut message = json!({ "role": role, "parts": [{ "type": "text", "content": text }] });
    if let (Some(reason), Some(object)) = (finish, message.as_object_mut()) {
        object.insert("finish_reason".into(), json!(reason));
    }
    json!([message]).to_string()
}

/// The GenAI finish reason (`stop`, `length`, `content_filter`, `tool_call`, `error`) for what a
/// dialect reported.
pub(crate) fn finish_reason(
    raw: Option<&str>,
    asked_for_tools: bool,
    failed: bool,
) -> &'static str {
    if failed {
        return "error";
    }
    match raw.unwrap_or("stop") {
        "length" | "max_tokens" | "model_length" => "length",
        "content_filter" | "refusal" => "content_filter",
        "tool_calls" | "tool_use" | "function_call" => "tool_call",
        _ if asked_for_tools => "tool_call",
        _ => "stop",
    }
}

fn message(message: &ModelMessage, finish: Option<&str>) -> Value {
    let mut parts = Vec::new();
    if message.role == "tool" {
        let mut part = json!({ "type": "tool_call_response", "response": message.content });
        if let (Some(id), Some(object)) = (&message.tool_call_id, part.as_object_mut()) {
            object.insert("id".into(), json!(id));
        }
        parts.push(part);
    } else if !message.content.is_empty() {
        parts.push(json!({ "type": "text", "content": message.content }));
    }
    if !message.thinking.is_empty() {
        parts.push(json!({ "type": "reasoning", "content": message.thinking }));
    }
    for call in &message.tool_calls {
        let mut part =
            json!({ "type": "tool_call", "name": call.name, "arguments": call.arguments });
        if let (Some(id), Some(object)) = (&call.id, part.as_object_mut()) {
            object.insert("id".into(), json!(id));
        }
        parts.push(part);
    }
    let mut out = json!({ "role": message.role, "parts": parts });
    if let Some(object) = out.as_object_mut() {
        if let Some(name) = &message.tool_name {
            object.insert("name".into(), json!(name));
        }
        if let Some(reason) = finish {
            object.insert("finish_reason".into(), json!(reason));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracer_wire::dialect::{ToolCall, ToolCallForm};

    fn call() -> ToolCall {
        ToolCall {
            id: Some("call_1".into()),
            name: "append".into(),
            arguments: json!({ "content": "buy milk" }),
            arguments_invalid: false,
            form: ToolCallForm::Structured,
        }
    }

    #[test]
    fn a_conversation_becomes_parts_by_role() {
        let request = ModelRequest {
            system: Some("be brief".into()),
            messages: vec![
                std::sync::Arc::new(ModelMessage {
                    role: "user".into(),
                    content: "Add buy milk".into(),
                    ..ModelMessage::default()
                }),
                std::sync::Arc::new(ModelMessage {
                    role: "assistant".into(),
                    tool_calls: vec![call()],
                    ..ModelMessage::default()
                }),
                std::sync::Arc::new(ModelMessage {
                    role: "tool".into(),
                    content: "ok".into(),
                    tool_call_id: Some("call_1".into()),
                    ..ModelMessage::default()
                }),
            ],
            ..ModelRequest::default()
        };
        let input: Value = serde_json::from_str(&input_messages(&request)).unwrap();
        assert_eq!(input[0]["parts"][0]["content"], "Add buy milk");
        assert_eq!(input[1]["parts"][0]["type"], "tool_call");
        assert_eq!(input[1]["parts"][0]["arguments"]["content"], "buy milk");
        assert_eq!(input[2]["parts"][0]["type"], "tool_call_response");
        assert_eq!(input[2]["parts"][0]["id"], "call_1");
        let system: Value = serde_json::from_str(&system_instructions(&request).unwrap()).unwrap();
        assert_eq!(system[0]["content"], "be brief");
    }

    #[test]
    fn finish_reasons_map_to_the_genai_values() {
        assert_eq!(finish_reason(Some("stop"), true, false), "tool_call");
        assert_eq!(finish_reason(Some("end_turn"), false, false), "stop");
        assert_eq!(finish_reason(Some("max_tokens"), false, false), "length");
        assert_eq!(finish_reason(None, false, true), "error");
        let answer = ModelResponse {
            message: ModelMessage {
                role: "assistant".into(),
                tool_calls: vec![call()],
                ..ModelMessage::default()
            },
            ..ModelResponse::default()
        };
        let output: Value = serde_json::from_str(&output_messages(&answer)).unwrap();
        assert_eq!(output[0]["finish_reason"], "tool_call");
    }
}
