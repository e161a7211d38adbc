//! The words an explanation takes from the dialect a hop speaks: what its tool calls are called
//! on the wire, the notes only one dialect has (Gemini's thought parts and thoughtSignature),
//! and Gemini's `countTokens`, a request of its own kind.

use serde_json::Value;

use crate::{explain::Case, explain::Explained, words::plural};
use tracer_wire::dialect::{Dialect, ModelResponse, Reading};

/// What a structured tool call is in the dialect's own terms (the `{call_form}` of a template).
pub(crate) fn call_form(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Gemini => "a functionCall part",
        _ => "tool_calls",
    }
}

/// The notes a reply gets in its dialect's words.
pub(crate) fn reply_notes(dialect: Dialect, reply: &ModelResponse, explained: &mut Explained) {
    if dialect != Dialect::Gemini {
        return;
    }
    let message = &reply.message;
    if !message.thinking.is_empty() {
        explained.note(
            Case::NoteGeminiThoughts,
            &[("bytes", message.thinking.len().to_string())],
        );
    }
    if let Some(bytes) = message.thinking_signature_bytes {
        explained.note(Case::NoteGeminiSignature, &[("bytes", bytes.to_string())]);
    }
}

/// A Code Assist call that is not a model turn (`/v1internal:loadCodeAssist`).
pub(crate) fn code_assist_call(path: &str) -> Option<Explained> {
    let method = path.split('?').next()?.strip_prefix("/v1internal:")?;
    let turn = ["generateContent", "streamGenerateContent", "countTokens"].contains(&method);
    (!turn && !method.is_empty())
        .then(|| Explained::new(Case::CodeAssistCall, &[("method", method.to_string())]))
}

/// A coding agent's own call beside the model (`agent_endpoints`), named with its purpose.
pub(crate) fn agent_endpoint_call(start: &tracer_wire::hop::HopStart) -> Option<Explained> {
    let endpoint = crate::read::agent_endpoints::agent_endpoint(start)?;
    Some(Explained::new(
        Case::AgentEndpoint,
        &[
            ("agent", endpoint.agent.to_string()),
            ("purpose", endpoint.purpose.to_string()),
        ],
    ))
}

/// A `countTokens` request: how many contents, for which model (from the path).
pub(crate) fn count_tokens_request(reading: &Reading, path: &str) -> Explained {
    let contents = match reading {
        Reading::Json(value) => value
            .get("contents")
            .or_else(|| value.pointer("/generateContentRequest/contents"))
            .or_else(|| value.pointer("/request/contents"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
        _ => 0,
    };
    let method = path.split('?').next().unwrap_or(path);
    let model = method
        .rsplit_once("models/")
        .and_then(|(_, after)| after.split(':').next())
        .filter(|m| !m.is_empty())
        .unwrap_or("the model");
    Explained::new(
        Case::CountTokens,
        &[
            ("messages", plural(contents, "message")),
            ("model", model.to_string()),
        ],
    )
}

/// A `countTokens` answer, when it says `totalTokens`.
pub(crate) fn token_count(reading: &Reading) -> Option<Explained> {
    let Reading::Json(value) = reading else {
        return None;
    };
    let value = value.get("response").unwrap_or(value);
    let total = value.get("totalTokens").and_then(Value::as_u64)?;
    Some(Explained::new(
        Case::TokenCount,
        &[("total", total.to_string())],
    ))
}
