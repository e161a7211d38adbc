//! Gemini parts, the pieces of every content: `text` (a `thought: true` one apart), `functionCall`
//! (its `thoughtSignature` counted in bytes), `functionResponse` (a `tool` message; Gemini CLI's
//! `<untrusted_context>` wrapper taken off), `inlineData` and `fileData` (told, never dumped).

use base64::Engine as _;
use serde_json::Value;

use super::ModelMessage;
use super::json_util::str_field;
use super::model_read::structured_call;

/// The parts of a content (`{role, parts: [...]}`), or none.
pub(super) fn parts_of(content: &Value) -> &[Value] {
    match content.get("parts") {
        Some(Value::Array(parts)) => parts,
        _ => &[],
    }
}

/// Contents roles are `user` and `model`; `model` is the assistant, as in the other dialects.
pub(super) fn normal_role(role: Option<&str>) -> String {
    match role {
        Some("model") => "assistant".into(),
        Some(role) => role.to_string(),
        None => "user".into(),
    }
}

/// Folds one part into a message: text (or a thought), a functionCall, inline data; a
/// `thoughtSignature` on any part adds its bytes.
pub(super) fn absorb_part(message: &mut ModelMessage, texts: &mut Vec<String>, part: &Value) {
    if let Some(signature) = str_field(part, "thoughtSignature") {
        let bytes = signature_bytes(signature);
        *message.thinking_signature_bytes.get_or_insert(0) += bytes;
    }
    if let Some(text) = str_field(part, "text") {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            message.thinking.push_str(text);
        } else {
            texts.push(text.to_string());
        }
    } else if let Some(call) = part.get("functionCall") {
        if let Some(name) = str_field(call, "name") {
            message.tool_calls.push(structured_call(
                str_field(call, "id").map(str::to_string),
                name.to_string(),
                call.get("args"),
            ));
        }
    } else if let Some(data) = part.get("inlineData").or_else(|| part.get("inline_data")) {
        texts.push(inline_data(data));
    } else if let Some(file) = part.get("fileData") {
        let mime = str_field(file, "mimeType").unwrap_or("a file");
        let uri = str_field(file, "fileUri").unwrap_or_default();
        texts.push(format!("[{mime} at {uri}]"));
    }
}

/// `inlineData` told by its size and type, never its base64.
fn inline_data(data: &Value) -> String {
    let mime = str_field(data, "mimeType")
        .or_else(|| str_field(data, "mime_type"))
        .unwrap_or("unknown type");
    let bytes = str_field(data, "data").map_or(0, signature_bytes);
    format!("[{bytes} bytes of {mime}]")
}

/// The decoded size of a base64 text (standard or URL-safe; its length when it is neither).
fn signature_bytes(encoded: &str) -> usize {
    let engines = [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::URL_SAFE,
    ];
    engines
        .iter()
        .find_map(|engine| engine.decode(encoded).ok())
        .map_or_else(|| encoded.len() * 3 / 4, |bytes| bytes.len())
}

/// A `functionResponse` as a `tool` message: its name, id, and the result's text.
pub(super) fn function_response(response: &Value) -> ModelMessage {
    let body = response.get("response");
    let error = body.and_then(|b| b.get("error")).filter(|e| !e.is_null());
    let result = error
        .or_else(|| body.and_then(|b| b.get("output")))
        .or_else(|| body.and_then(|b| b.get("content")));
    let text = match result.or(body) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    ModelMessage {
        role: "tool".into(),
        content: without_untrusted_wrapper(&text).to_string(),
        tool_call_id: str_field(response, "id").map(str::to_string),
        tool_name: str_field(response, "name").map(str::to_string),
        is_error: error.is_some(),
        ..ModelMessage::default()
    }
}

/// Gemini CLI's `<untrusted_context>…</untrusted_context>` around a tool's output, taken off.
fn without_untrusted_wrapper(text: &str) -> &str {
    let trimmed = text.trim();
    trimmed
        .strip_prefix("<untrusted_context>")
        .and_then(|rest| rest.strip_suffix("</untrusted_context>"))
        .map_or(text, str::trim)
}
