//! Small permissive helpers shared by the dialect readers: lenient parsing, field access, framing.

use serde_json::Value;

use super::{BodyReading, Integrity, Reading};
use crate::hop::{BodyCapture, Header, header_text};

/// Parses a body as JSON, tolerating surrounding whitespace; None when it is not JSON.
pub(super) fn parse_lenient(body: &[u8]) -> Option<Value> {
    serde_json::from_slice(body.trim_ascii()).ok()
}

/// A string field, or None.
pub(super) fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// A non-negative integer field, or None.
pub(super) fn u64_field(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// A string field as an owned String, or empty.
pub(super) fn text(value: &Value, key: &str) -> String {
    str_field(value, key).unwrap_or_default().to_string()
}

/// Content that may be a string or an array of `{type:"text", text}` parts, as one string.
pub(super) fn content_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part {
                Value::String(s) => Some(s.as_str()),
                other => str_field(other, "text"),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Tool arguments given as a JSON string (OpenAI) become JSON; `(value, invalid)`.
pub(super) fn arguments_from(value: Option<&Value>) -> (Value, bool) {
    match value {
        Some(Value::String(s)) if s.trim().is_empty() => (Value::Object(Default::default()), false),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(parsed) => (parsed, false),
            Err(_) => (Value::String(s.clone()), true),
        },
        Some(other) => (other.clone(), false),
        None => (Value::Object(Default::default()), false),
    }
}

/// How a response body is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    Sse,
    Ndjson,
    Json,
}

/// Framing from the Content-Type header, else from the body's first bytes.
pub(super) fn framing(headers: &[Header], body: &[u8]) -> Framing {
    let content_type = header_text(headers, "content-type")
        .unwrap_or_default()
        .to_ascii_lowercase();
    if content_type.contains("text/event-stream") {
        return Framing::Sse;
    }
    if content_type.contains("ndjson") || content_type.contains("jsonl") {
        return Framing::Ndjson;
    }
    let start = body.trim_ascii_start();
    if start.starts_with(b"data:") || start.starts_with(b"event:") || start.starts_with(b"id:") {
        return Framing::Sse;
    }
    let trimmed = body.trim_ascii();
    if trimmed.contains(&b'\n') && serde_json::from_slice::<Value>(trimmed).is_err() {
        return Framing::Ndjson;
    }
    Framing::Json
}

/// The events of an SSE body one at a time; each with whether it is the one a cut-off stream
/// left unfinished.
pub(super) fn sse_events(body: &[u8]) -> crate::stream::BodyRecords<'_, crate::stream::SseDecoder> {
    crate::stream::BodyRecords::new(body, crate::stream::SseDecoder::new())
}

/// The NDJSON lines of a body one at a time; each with whether it is a last line without its
/// newline (maybe cut off).
pub(super) fn ndjson_lines(
    body: &[u8],
) -> crate::stream::BodyRecords<'_, crate::stream::NdjsonDecoder> {
    crate::stream::BodyRecords::new(body, crate::stream::NdjsonDecoder::new())
}

/// First characters of a body as text, for bodies no reader understands.
pub(super) fn preview(body: &[u8]) -> String {
    const LIMIT: usize = 200;
    let text = String::from_utf8_lossy(body);
    let mut out: String = text.chars().take(LIMIT).collect();
    if text.chars().count() > LIMIT {
        out.push('…');
    }
    out
}

/// A body read without a dialect: JSON if it parses, else text, else empty.
pub(super) fn generic(body: &BodyCapture) -> BodyReading {
    if body.bytes.trim_ascii().is_empty() {
        return whole(Reading::Empty);
    }
    match parse_lenient(&body.bytes) {
        Some(value) => whole(Reading::Json(value)),
        None => whole(Reading::Text(preview(&body.bytes))),
    }
}

pub(super) fn whole(reading: Reading) -> BodyReading {
    BodyReading {
        reading,
        integrity: Integrity::Whole,
    }
}

/// A body that should have been JSON of some shape and is not.
pub(super) fn malformed(body: &[u8], what: &str) -> BodyReading {
    let detail = match serde_json::from_slice::<Value>(body.trim_ascii()) {
        Err(err) => format!("{what}: {err}"),
        Ok(_) => what.to_string(),
    };
    BodyReading {
        reading: if body.trim_ascii().is_empty() {
            Reading::Empty
        } else {
            Reading::Text(preview(body))
        },
        integrity: Integrity::Malformed(detail),
    }
}
