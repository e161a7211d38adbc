//! Gemini requests (`generateContent`, Google AI, Vertex AI and Code Assist): contents and parts
//! read as a conversation, `systemInstruction`, `functionDeclarations`, `generationConfig`.
//!
//! Gemini CLI puts its `<session_context>` block in a text part before the user's words: such a
//! part is counted as a system part of role `user` (`SystemSource::Message("user")`), not as the
//! user's text, so the user's words stay the message's content (and a trace's title). The parts
//! themselves are read in `gemini_parts.rs`.

use serde_json::Value;

use super::gemini_parts::{absorb_part, function_response, normal_role, parts_of};
use super::json_util::{str_field, whole};
use super::model_read::object_body;
use super::ollama_read::add_text_tool_calls;
use super::{
    BodyReading, Dialect, ModelMessage, ModelRequest, Reading, SystemPart, SystemSource, ToolDef,
};
use crate::hop::BodyCapture;

/// The Gemini dialect a path names (query already cut), if any.
pub(super) fn dialect_of_path(path: &str) -> Option<Dialect> {
    let method = path.rsplit_once(':').map(|(_, method)| method)?;
    match method {
        "generateContent" | "streamGenerateContent" => Some(Dialect::Gemini),
        "countTokens" => Some(Dialect::GeminiCountTokens),
        _ => None,
    }
}

/// The model a path names: `…/models/gemini-2.5-pro:generateContent` gives `gemini-2.5-pro`.
pub(super) fn model_of_path(path: &str) -> Option<String> {
    let path = path.split('?').next().unwrap_or(path);
    let (_, after) = path.rsplit_once("models/")?;
    let model = after.split(':').next().unwrap_or(after);
    (!model.is_empty() && !model.contains('/')).then(|| model.to_string())
}

/// What only the path says: the model (the body names none, except Code Assist's wrapper) and
/// whether the reply is to be streamed.
pub(super) fn add_path_facts(reading: &mut BodyReading, path: &str) {
    if let Reading::ModelRequest(request) = &mut reading.reading {
        if request.model.is_none() {
            request.model = model_of_path(path);
        }
        let method = path.split('?').next().unwrap_or(path);
        request.stream = method.ends_with(":streamGenerateContent");
    }
}

/// Reads a `generateContent` request, or Code Assist's `{"model", "request": {…}}` around one.
pub(super) fn request(body: &BodyCapture) -> BodyReading {
    object_body(body, |outer| {
        let value = outer
            .get("request")
            .filter(|r| r.is_object())
            .unwrap_or(outer);
        let mut request = ModelRequest {
            model: str_field(outer, "model").map(str::to_string),
            body_bytes: usize::try_from(body.total_len)
                .unwrap_or(usize::MAX)
                .max(body.bytes.len()),
            cache_marks: usize::from(value.get("cachedContent").is_some_and(Value::is_string)),
            ..ModelRequest::default()
        };
        read_system(value.get("systemInstruction"), &mut request);
        read_tools(value.get("tools"), &mut request);
        read_generation_config(value.get("generationConfig"), &mut request);
        if let Some(Value::Array(contents)) = value.get("contents") {
            for content in contents {
                read_content(content, &mut request);
            }
        }
        whole(Reading::ModelRequest(request))
    })
}

fn read_system(instruction: Option<&Value>, request: &mut ModelRequest) {
    let parts: Vec<&str> = match instruction {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(content) => parts_of(content)
            .iter()
            .filter_map(|part| str_field(part, "text"))
            .collect(),
        None => Vec::new(),
    };
    for text in &parts {
        request.system_parts.push(SystemPart {
            source: SystemSource::SystemInstruction,
            bytes: text.len(),
            cache_marked: false,
        });
    }
    let system = parts.join("\n");
    request.system = (!system.is_empty()).then(|| system.into());
}

/// `tools: [{functionDeclarations: [...]}, {googleSearch: {}}, …]`: each declaration a tool,
/// each built-in tool entry (`googleSearch`, `codeExecution`) one tool named by its key.
fn read_tools(tools: Option<&Value>, request: &mut ModelRequest) {
    let Some(Value::Array(entries)) = tools else {
        return;
    };
    let size = |value: &Value| serde_json::to_vec(value).map_or(0, |bytes| bytes.len());
    for entry in entries {
        let Some(map) = entry.as_object() else {
            continue;
        };
        for (key, inner) in map {
            let declarations = match (key.as_str(), inner) {
                ("functionDeclarations" | "function_declarations", Value::Array(d)) => d,
                _ => {
                    request.tools.push(key.clone());
                    request.tool_defs.push(ToolDef {
                        name: key.clone(),
                        namespace: None,
                        bytes: size(inner),
                    });
                    continue;
                }
            };
            for declaration in declarations {
                let Some(name) = str_field(declaration, "name") else {
                    continue;
                };
                request.tools.push(name.to_string());
                request.tool_defs.push(ToolDef {
                    name: name.to_string(),
                    namespace: None,
                    bytes: size(declaration),
                });
            }
        }
    }
}

/// `responseMimeType` / `responseSchema` (the router call asks for JSON) and `thinkingConfig`.
fn read_generation_config(config: Option<&Value>, request: &mut ModelRequest) {
    let Some(config) = config else { return };
    let mime = str_field(config, "responseMimeType").filter(|m| *m != "text/plain");
    let schema = [
        "responseJsonSchema",
        "responseSchema",
        "response_json_schema",
    ]
    .iter()
    .find_map(|key| config.get(*key));
    if mime.is_some() || schema.is_some() {
        let kind = match mime {
            Some("application/json") | None => "JSON".to_string(),
            Some(other) => other.to_string(),
        };
        let fields: Vec<&str> = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default();
        request.answer_format = Some(if fields.is_empty() {
            kind
        } else {
            format!("{kind} ({})", fields.join(", "))
        });
    }
    if let Some(Value::Object(thinking)) = config.get("thinkingConfig") {
        let said: Vec<String> = thinking
            .iter()
            .map(|(key, value)| match value {
                Value::Bool(true) => key.clone(),
                Value::String(s) => format!("{key} {s}"),
                other => format!("{key} {other}"),
            })
            .collect();
        request.thinking_mode = (!said.is_empty()).then(|| said.join(", "));
    }
}

/// Whether a text part is the host's context block rather than the user's words.
fn is_host_context(text: &str) -> bool {
    text.trim_start().starts_with("<session_context>")
}

/// One content of the conversation: its message, then a `tool` message per functionResponse.
fn read_content(content: &Value, request: &mut ModelRequest) {
    let mut message = ModelMessage {
        role: normal_role(str_field(content, "role")),
        ..ModelMessage::default()
    };
    let mut results = Vec::new();
    let mut texts = Vec::new();
    for part in parts_of(content) {
        if let Some(response) = part.get("functionResponse") {
            results.push(function_response(response));
            continue;
        }
        if message.role == "user"
            && let Some(text) = str_field(part, "text").filter(|t| is_host_context(t))
        {
            request.system_parts.push(SystemPart {
                source: SystemSource::Message("user".into()),
                bytes: text.len(),
                cache_marked: false,
            });
            continue;
        }
        absorb_part(&mut message, &mut texts, part);
    }
    message.content = texts.join("\n");
    add_text_tool_calls(&mut message);
    let answers_only = !results.is_empty() && message.content.is_empty();
    if !answers_only || !message.tool_calls.is_empty() {
        request.messages.push(std::sync::Arc::new(message));
    }
    request
        .messages
        .extend(results.into_iter().map(std::sync::Arc::new));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> ModelRequest {
        let body = BodyCapture::whole(value.to_string().into_bytes());
        match request(&body).reading {
            Reading::ModelRequest(request) => request,
            other => panic!("not a request: {other:?}"),
        }
    }

    #[test]
    fn paths_name_the_dialect_and_the_model() {
        let cases = [
            (
                "/v1beta/models/gemini-2.5-pro:generateContent",
                "gemini-2.5-pro",
            ),
            (
                "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
                "gemini-2.5-pro",
            ),
            (
                "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
                "gemini-2.5-flash",
            ),
        ];
        for (path, model) in cases {
            assert_eq!(dialect_of_path(path), Some(Dialect::Gemini), "{path}");
            assert_eq!(
                model_of_path(&format!("{path}?alt=sse")).as_deref(),
                Some(model)
            );
        }
        assert_eq!(
            dialect_of_path("/v1internal:streamGenerateContent"),
            Some(Dialect::Gemini)
        );
        assert_eq!(model_of_path("/v1internal:streamGenerateContent"), None);
        assert_eq!(
            dialect_of_path("/v1beta/models/gemini-2.5-pro:countTokens"),
            Some(Dialect::GeminiCountTokens)
        );
        assert_eq!(dialect_of_path("/v1internal:loadCodeAssist"), None);
        assert_eq!(dialect_of_path("/v1/chat/completions"), None);
    }

    #[test]
    fn parts_read_as_messages_with_calls_results_thoughts_and_data() {
        let request = read(json!({
            "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Use tools."}]},
            "contents": [
                {"role": "user", "parts": [
                    {"text": "<session_context>\nlinux\n</session_context>"},
                    {"text": "Add buy milk"},
                    {"inlineData": {"mimeType": "image/png", "data": "AAECAw=="}}]},
                {"role": "model", "parts": [
                    {"text": "Let me think.", "thought": true},
                    {"functionCall": {"id": "c1", "name": "append", "args": {"content": "milk"}},
                     "thoughtSignature": "AAAA"}]},
                {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "append",
                    "response": {"output": "<untrusted_context>\nAppended.\n</untrusted_context>"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "read",
                    "response": {"error": "no such file"}}}]}
            ],
            "tools": [{"functionDeclarations": [{"name": "append"}, {"name": "read"}]},
                      {"googleSearch": {}}],
            "generationConfig": {"thinkingConfig": {"includeThoughts": true, "thinkingBudget": 512}}
        }));
        let roles: Vec<&str> = request.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool"]);
        assert_eq!(
            request.messages[0].content,
            "Add buy milk\n[4 bytes of image/png]"
        );
        let model = &request.messages[1];
        assert_eq!(model.thinking, "Let me think.");
        assert_eq!(model.thinking_signature_bytes, Some(3));
        assert_eq!(
            model.tool_calls[0].display(),
            "append {\"content\":\"milk\"}"
        );
        assert_eq!(model.tool_calls[0].id.as_deref(), Some("c1"));
        let result = &request.messages[2];
        assert_eq!(result.content, "Appended.");
        assert_eq!(
            (result.tool_name.as_deref(), result.tool_call_id.as_deref()),
            (Some("append"), Some("c1"))
        );
        assert!(request.messages[3].is_error);
        assert_eq!(request.messages[3].content, "no such file");
        assert_eq!(request.system.as_deref(), Some("Be brief.\nUse tools."));
        let sources: Vec<(&SystemSource, usize)> = request
            .system_parts
            .iter()
            .map(|p| (&p.source, p.bytes))
            .collect();
        assert_eq!(
            sources,
            [
                (&SystemSource::SystemInstruction, 9),
                (&SystemSource::SystemInstruction, 10),
                (&SystemSource::Message("user".into()), 42),
            ]
        );
        assert_eq!(request.tools, ["append", "read", "googleSearch"]);
        assert_eq!(request.tool_defs[0].bytes, br#"{"name":"append"}"#.len());
        assert_eq!(
            request.thinking_mode.as_deref(),
            Some("includeThoughts, thinkingBudget 512")
        );
        assert_eq!(request.answer_format, None);
        assert!(!request.is_side_request());
    }

    #[test]
    fn a_json_answer_without_tools_is_a_side_request_and_code_assist_is_unwrapped() {
        let request = read(json!({
            "model": "gemini-2.5-flash-lite", "project": "p",
            "request": {
                "contents": [{"role": "user", "parts": [{"text": "Add buy milk"}]}],
                "generationConfig": {"responseMimeType": "application/json",
                    "responseJsonSchema": {"properties": {"reasoning": {}, "model_choice": {}}}}
            }
        }));
        assert_eq!(request.model.as_deref(), Some("gemini-2.5-flash-lite"));
        assert_eq!(
            request.answer_format.as_deref(),
            Some("JSON (reasoning, model_choice)")
        );
        assert!(request.is_side_request());
        assert_eq!(request.latest_user_text(), Some("Add buy milk"));
    }
}
