//! The notes a model request or reply gets in its own API's terms: the tool call's block or
//! item, thinking (signed, redacted, encrypted), the text said before a call, what a request
//! carries and what is new in it, and how a tool's result goes back to the model.

use crate::read::request_anatomy::{RequestAnatomy, human_bytes, user_words};
use crate::{explain::Case, explain::Explained, words::plural, words::shorten};
use tracer_wire::dialect::{Dialect, ModelMessage, ModelRequest, SystemPart, SystemSource};

/// How long a quoted text may be in a note.
const QUOTE: usize = 72;
/// How long thinking may be in a note.
const THOUGHT: usize = 160;

/// The words a structured tool call (`Case::ModelToolCall`) is told in, in the reply's own
/// terms; None for the chat APIs' `tool_calls`, the case's own words.
pub(super) fn tool_call_words(dialect: Dialect) -> Option<Case> {
    match dialect {
        Dialect::AnthropicMessages => Some(Case::WordsToolUse),
        Dialect::OpenAiResponses => Some(Case::WordsFunctionCall),
        _ => None,
    }
}

/// `says "I'll add that." and ` when the model wrote text before its call, else empty.
pub(super) fn said_before_call(message: &ModelMessage) -> String {
    let text = message.content.trim();
    if text.is_empty() || message.tool_calls.is_empty() {
        return String::new();
    }
    format!("says \"{}\" and ", shorten(text, QUOTE))
}

/// The notes of a reply's message: its text before a call, its thinking, its hidden reasoning.
pub(super) fn reply_notes(explained: &mut Explained, message: &ModelMessage, dialect: Dialect) {
    thinking_notes(explained, message, dialect);
    let text = message.content.trim();
    if !text.is_empty() && !message.tool_calls.is_empty() {
        explained.note(Case::NoteTextBeforeCall, &[("text", shorten(text, QUOTE))]);
    }
}

fn thinking_notes(explained: &mut Explained, message: &ModelMessage, dialect: Dialect) {
    // Gemini's thought parts and thoughtSignature get their own words (`dialect_words`).
    if dialect == Dialect::Gemini {
        return;
    }
    if !message.thinking.trim().is_empty() {
        let place = match dialect {
            Dialect::AnthropicMessages => "a thinking block",
            Dialect::OpenAiResponses => "a reasoning item (its summary)",
            Dialect::OpenAiChat => "reasoning_content",
            _ => "its thinking field",
        };
        explained.note(
            Case::NoteThinking,
            &[
                ("place", place.to_string()),
                ("text", shorten(&message.thinking, THOUGHT)),
            ],
        );
    }
    if let Some(bytes) = message.thinking_signature_bytes {
        explained.note(Case::NoteThinkingSigned, &[("bytes", bytes.to_string())]);
    }
    if let Some(bytes) = message.hidden_reasoning_bytes {
        let what = match dialect {
            Dialect::AnthropicMessages => "redacted_thinking",
            _ => "encrypted reasoning",
        };
        explained.note(
            Case::NoteHiddenReasoning,
            &[("what", what.to_string()), ("bytes", bytes.to_string())],
        );
    }
}

/// How a tool's result goes back to the model, in the trace's model API's terms.
pub(super) fn handoff_note(dialect: Option<Dialect>, is_error: bool) -> Option<Case> {
    match (dialect, is_error) {
        (Some(Dialect::AnthropicMessages), false) => Some(Case::NoteHandoffToolResult),
        (Some(Dialect::AnthropicMessages), true) => Some(Case::NoteHandoffToolResultError),
        (Some(Dialect::OpenAiResponses), _) => Some(Case::NoteHandoffFunctionOutput),
        (_, false) => Some(Case::NoteHandoffToolMessage),
        (_, true) => None,
    }
}

/// The notes of a request: its system prompt, its tools by origin, its cache marks, the
/// thinking it asks for, and what is new since the previous request of its conversation.
pub(super) fn request_notes(
    explained: &mut Explained,
    request: &ModelRequest,
    anatomy: &RequestAnatomy,
    dialect: Dialect,
) {
    if !request.system_parts.is_empty() {
        explained.note(
            Case::NoteSystemPrompt,
            &[
                ("parts", system_parts_text(&request.system_parts, dialect)),
                ("bytes", human_bytes(anatomy.system_bytes)),
            ],
        );
    }
    if anatomy.tools.total > 0 {
        explained.note(
            Case::NoteToolsOffered,
            &[
                ("total", plural(anatomy.tools.total, "tool")),
                ("size", tools_size(anatomy.tool_bytes)),
                ("origins", origins_text(anatomy)),
            ],
        );
    }
    if anatomy.cache_marks > 0 {
        explained.note(
            Case::NoteCacheMarks,
            &[("marks", plural(anatomy.cache_marks, "cache_control mark"))],
        );
    }
    if let Some(mode) = &anatomy.thinking_mode {
        explained.note(Case::NoteThinkingMode, &[("mode", mode.clone())]);
        if dialect == Dialect::AnthropicMessages && mode.starts_with("adaptive") {
            explained.note(Case::NoteAdaptiveThinking, &[]);
        }
    }
    if let Some(new) = anatomy.new_messages {
        explained.note(
            Case::NoteNewSince,
            &[("new", new_messages_text(request, new, dialect))],
        );
    }
}

/// `3 system blocks and 1 role: system message in the conversation`.
fn system_parts_text(parts: &[SystemPart], dialect: Dialect) -> String {
    let mut groups: Vec<(String, usize)> = Vec::new();
    for part in parts {
        let label = match (&part.source, dialect) {
            (SystemSource::SystemField, Dialect::AnthropicMessages) => "system block".to_string(),
            (SystemSource::SystemField, _) => "system field".to_string(),
            (SystemSource::Instructions, _) => "instructions field".to_string(),
            (SystemSource::SystemInstruction, _) => "systemInstruction part".to_string(),
            (SystemSource::Message(role), _) => format!("role: {role} message"),
        };
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => groups.push((label, 1)),
        }
    }
    let pieces: Vec<String> = groups
        .into_iter()
        .map(|(label, n)| match label.strip_prefix("role: ") {
            Some(_) => format!("{} in the conversation", plural(n, &label)),
            None if n == 1 => format!("the {label}"),
            None => plural(n, &label),
        })
        .collect();
    join_and(&pieces)
}

/// ` (64.8 KB of names, descriptions and schemas)`, or nothing when the reader did not measure.
fn tools_size(bytes: usize) -> String {
    match bytes {
        0 => String::new(),
        bytes => format!(
            " ({} of names, descriptions and schemas)",
            human_bytes(bytes)
        ),
    }
}

/// `24 the host's own, 5 from the MCP server notes`, or `all the host's own`.
fn origins_text(anatomy: &RequestAnatomy) -> String {
    let count = &anatomy.tools;
    if count.servers.is_empty() {
        return "all the host's own".to_string();
    }
    let mut pieces = Vec::new();
    if count.host > 0 {
        pieces.push(format!("{} the host's own", count.host));
    }
    for (server, n) in &count.servers {
        pieces.push(format!("{n} from the MCP server {server}"));
    }
    pieces.join(", ")
}

/// What the last `new` messages of the conversation are, in the API's terms.
fn new_messages_text(request: &ModelRequest, new: usize, dialect: Dialect) -> String {
    let conversation: Vec<&ModelMessage> = request
        .messages
        .iter()
        .map(|m| &**m)
        .filter(|m| m.role != "system" && m.role != "developer")
        .collect();
    let start = conversation.len().saturating_sub(new);
    let pieces: Vec<String> = conversation[start..]
        .iter()
        .map(|message| message_text(message, dialect))
        .collect();
    if pieces.is_empty() {
        return "nothing".to_string();
    }
    join_and(&pieces)
}

fn message_text(message: &ModelMessage, dialect: Dialect) -> String {
    let anthropic = dialect == Dialect::AnthropicMessages;
    match message.role.as_str() {
        "assistant" => {
            let mut parts = Vec::new();
            if !message.thinking.is_empty() || message.thinking_signature_bytes.is_some() {
                parts.push("thinking".to_string());
            }
            if message.hidden_reasoning_bytes.is_some() {
                parts.push(if anthropic {
                    "redacted_thinking".to_string()
                } else {
                    "encrypted reasoning".to_string()
                });
            }
            if !message.content.trim().is_empty() {
                parts.push("text".to_string());
            }
            let calls = message.tool_calls.len();
            if calls > 0 {
                parts.push(match dialect {
                    Dialect::AnthropicMessages => plural(calls, "tool_use block"),
                    Dialect::OpenAiResponses => plural(calls, "function_call item"),
                    _ => plural(calls, "tool call"),
                });
            }
            match parts.is_empty() {
                true => "the model's reply".to_string(),
                false => format!("the model's reply ({})", join_and(&parts)),
            }
        }
        "tool" => {
            let error = if message.is_error {
                " with is_error"
            } else {
                ""
            };
            match dialect {
                Dialect::AnthropicMessages => {
                    format!("a tool_result block{error} in a user message")
                }
                Dialect::OpenAiResponses => "a function_call_output item".to_string(),
                _ => "a role: tool message".to_string(),
            }
        }
        "user" => {
            let words = user_words(&ModelRequest {
                messages: vec![std::sync::Arc::new(message.clone())],
                ..ModelRequest::default()
            });
            match words {
                Some(words) => format!("a user message (\"{}\")", shorten(&words, QUOTE)),
                None => "a user message".to_string(),
            }
        }
        role => format!("a {role} message"),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(pieces: &[String]) -> String {
    match pieces {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
