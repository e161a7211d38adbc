//! What a model request's body is made of, measured once while the body is at hand: the bytes
//! of each system block, message and kind of history, the prompt's regions as digests and the
//! cache lifetimes it asks for; what the context shares and cache verdicts need of it.

use serde_json::Value;

use super::conversation_pairs::request_json;
use super::prompt_regions::{
    REGION_KEYS, RegionDigests, asked_ttls, marks_digest, message_items, value_digest,
};
use crate::RecordedHop;
use crate::read::message_notes::message_note;

/// How many of a request's last messages its parts keep a note of ([`RequestParts::tail_notes`]).
pub(crate) const TAIL_NOTES: usize = 8;

/// One model request's body, measured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestParts {
    /// Bytes of each block of the system field (`system`, `instructions`,
    /// `systemInstruction.parts`).
    pub system_blocks: Vec<usize>,
    /// Bytes of each system or developer message of the conversation.
    pub system_messages: Vec<usize>,
    /// The history's bytes by kind (`user`, `assistant`, `tool results`, `thinking`), in the
    /// order each kind first appears.
    pub history_kinds: Vec<(&'static str, usize)>,
    /// Bytes of each message of the conversation, system and developer ones aside.
    pub message_bytes: Vec<usize>,
    /// The body as compact JSON.
    pub json_bytes: usize,
    /// The prompt's regions (tools, system blocks, messages) as digests.
    pub regions: RegionDigests,
    /// The cache lifetimes the request asks for, in seconds, ascending.
    pub ttls: Vec<u64>,
    /// The body's other fields (its parameters: model, stream, limits…) by name, ascending,
    /// each as a digest of its value, cache marks aside: what tells two requests' parameters
    /// apart without their bodies.
    pub parameters: Vec<(String, u64)>,
    /// The notes (role, kind, first words: `message_notes`) of the prompt's last
    /// [`TAIL_NOTES`] messages, in order: what names the messages a request added at its end
    /// (or the next removed) without either body.
    pub tail_notes: Vec<String>,
    /// Where the request's cache marks sit (`prompt_regions::marks_digest`).
    pub marks: u64,
}

impl RequestParts {
    /// The parts of a hop's request body, when it is JSON.
    pub(crate) fn of(hop: &RecordedHop) -> Option<RequestParts> {
        request_json(hop).map(|body| RequestParts::of_body(&body))
    }

    /// The parts of a request body.
    pub(crate) fn of_body(body: &Value) -> RequestParts {
        let mut history_kinds: Vec<(&'static str, usize)> = Vec::new();
        let messages = messages_of(body);
        for message in &messages {
            for (kind, bytes) in message_kinds(message) {
                match history_kinds.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, total)) => *total += bytes,
                    None => history_kinds.push((kind, bytes)),
                }
            }
        }
        RequestParts {
            system_blocks: system_field(body).into_iter().map(json_len).collect(),
            system_messages: (all_messages(body).iter())
                .filter(|m| is_system(m))
                .map(json_len)
                .collect(),
            history_kinds,
            message_bytes: messages.iter().map(|m| json_len(m)).collect(),
            json_bytes: json_len(body),
            regions: RegionDigests::of_body(body),
            ttls: asked_ttls(body),
            parameters: parameter_digests(body),
            tail_notes: tail_notes(body),
            marks: marks_digest(body),
        }
    }
}

/// The notes of a body's last [`TAIL_NOTES`] messages.
fn tail_notes(body: &Value) -> Vec<String> {
    let items = message_items(body);
    let from = items.len().saturating_sub(TAIL_NOTES);
    (from..items.len())
        .map(|i| message_note(&items, i))
        .collect()
}

/// The digests of a body's parameters (its fields outside the prompt's regions), by name.
fn parameter_digests(body: &Value) -> Vec<(String, u64)> {
    let Some(fields) = body.as_object() else {
        return Vec::new();
    };
    let mut out: Vec<(String, u64)> = (fields.iter())
        .filter(|(key, _)| !REGION_KEYS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value_digest(value)))
        .collect();
    out.sort();
    out
}

/// Bytes of a value as compact JSON, counted as written (no copy made).
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

/// The system field's blocks: `system` (a string or blocks), `instructions`,
/// `systemInstruction.parts`.
fn system_field(body: &Value) -> Vec<&Value> {
    let field = body
        .get("system")
        .or_else(|| body.get("instructions"))
        .or_else(|| body.get("systemInstruction").and_then(|s| s.get("parts")));
    match field {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    }
}

fn all_messages(body: &Value) -> &[Value] {
    body.get("messages")
        .or_else(|| body.get("input"))
        .or_else(|| body.get("contents"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn is_system(message: &Value) -> bool {
    matches!(
        message.get("role").and_then(Value::as_str),
        Some("system" | "developer")
    )
}

/// The conversation's messages, system and developer ones aside.
fn messages_of(body: &Value) -> Vec<&Value> {
    all_messages(body)
        .iter()
        .filter(|m| !is_system(m))
        .collect()
}

/// One message's bytes by kind (`user`, `assistant`, `tool results`, `thinking`): block by
/// block where it has blocks, its envelope counted with its role.
fn message_kinds(message: &Value) -> Vec<(&'static str, usize)> {
    let role_kind = match (
        message.get("role").and_then(Value::as_str),
        message.get("type").and_then(Value::as_str),
    ) {
        (_, Some("function_call_output" | "custom_tool_call_output")) | (Some("tool"), _) => {
            "tool results"
        }
        (_, Some("reasoning")) => "thinking",
        (_, Some("function_call" | "custom_tool_call")) => "assistant",
        (Some("assistant" | "model"), _) => "assistant",
        _ => "user",
    };
    let whole = json_len(message);
    let blocks = message
        .get("content")
        .or_else(|| message.get("parts"))
        .and_then(Value::as_array);
    let Some(blocks) = blocks else {
        return vec![(role_kind, whole)];
    };
    let mut out = Vec::new();
    let mut inside = 0;
    for block in blocks {
        let bytes = json_len(block);
        inside += bytes;
        let kind = match block.get("type").and_then(Value::as_str) {
            Some("tool_result") => "tool results",
            Some("thinking" | "redacted_thinking") => "thinking",
            _ if block.get("functionResponse").is_some() => "tool results",
            _ if block.get("thought").and_then(Value::as_bool) == Some(true) => "thinking",
            _ => role_kind,
        };
        out.push((kind, bytes));
    }
    out.push((role_kind, whole.saturating_sub(inside)));
    out
}
