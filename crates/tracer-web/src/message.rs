//! One message as the page opens it: its entry from the trace's hop log with its body read back
//! (its coding undone) and the events of a streamed answer with their times; apart, for a model
//! request, what changed since the previous request of its conversation (two bodies compared).

use serde_json::{Value, json};

use crate::trace_cache::BuiltTrace;
use tracer_export::hop_log::Body;
use tracer_live::load::recorded;
use tracer_store::{Result, Store};
use tracer_trace::read::changes_by_call::CallChanges;
use tracer_trace::read::conversation_pairs::request_json;
use tracer_trace::read::request_changes::request_changes;
use tracer_wire::content_encoding::readable;
use tracer_wire::hop::{Chunk, Header};

/// Events of one answer listed at most; the rest are counted.
const EVENTS: usize = 5_000;

/// Message `number` of `trace` with its body, or None when the trace has no such message.
pub(crate) async fn message(
    store: &Store,
    trace: &BuiltTrace,
    number: u64,
) -> Result<Option<Value>> {
    let Some(row) = trace.message(number) else {
        return Ok(None);
    };
    let mut entry = row.entry();
    let hop = trace.hop(&row.hop_id);
    // An answer is read without its request (a long conversation's request is the big one).
    let stored = if row.request {
        store.hop_by_id(&row.hop_id).await?
    } else {
        store.hop_answer_by_id(&row.hop_id).await?
    };
    let (headers, capture) = if row.request {
        (&stored.start.request_headers, &stored.end.request_body)
    } else {
        (&stored.end.response_headers, &stored.end.response_body)
    };
    let body = readable(headers, capture);
    let coding = body.coding.clone();
    let encoded = serde_json::to_value(Body::encode(&body.body)).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut entry {
        map.insert("body".into(), encoded);
    }
    let events = if row.request {
        Value::Null
    } else {
        let chunks = coding.is_none().then_some(stored.end.chunks.as_slice());
        events(headers, &body.body.bytes, chunks)
    };
    Ok(Some(json!({
        "message": entry,
        "hop": hop,
        "coding": coding,
        "events": events,
    })))
}

/// The SSE events or NDJSON lines of an answer, each with the time since the request its last
/// byte came (from the chunk timing, when the bytes are as they came); null for other bodies.
fn events(headers: &[Header], bytes: &[u8], chunks: Option<&[Chunk]>) -> Value {
    let content_type = headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .and_then(Header::text)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let kind = if content_type.starts_with("text/event-stream") {
        "sse"
    } else if content_type.contains("ndjson") || content_type.contains("jsonl") {
        "ndjson"
    } else {
        return Value::Null;
    };
    let text = String::from_utf8_lossy(bytes);
    let separator = if kind == "sse" { "\n\n" } else { "\n" };
    let normalized = text.replace("\r\n", "\n");
    let mut out = Vec::new();
    let mut end = 0usize;
    let mut more = 0usize;
    for record in normalized.split(separator) {
        end += record.len() + separator.len();
        if record.trim().is_empty() {
            continue;
        }
        if out.len() == EVENTS {
            more += 1;
            continue;
        }
        let offset = chunks.and_then(|chunks| offset_of(chunks, end.min(normalized.len())));
        let (event, data) = if kind == "sse" {
            sse_fields(record)
        } else {
            (None, record.to_string())
        };
        out.push(json!({"offset_ns": offset, "kind": kind, "event": event, "data": data}));
    }
    if more > 0 {
        out.push(json!({"offset_ns": null, "kind": kind, "event": null,
            "data": format!("… {more} more not listed")}));
    }
    Value::Array(out)
}

/// When the chunk holding byte `end` came, since the request.
fn offset_of(chunks: &[Chunk], end: usize) -> Option<i64> {
    let mut seen = 0u64;
    for chunk in chunks {
        seen += chunk.size;
        if seen >= end as u64 {
            return Some(chunk.offset_ns);
        }
    }
    None
}

/// An SSE record's event name and its data lines joined.
fn sse_fields(record: &str) -> (Option<String>, String) {
    let mut event = None;
    let mut data: Vec<&str> = Vec::new();
    for line in record.lines() {
        if let Some(name) = line.strip_prefix("event:") {
            event = Some(name.trim().to_string());
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    (event, data.join("\n"))
}

/// For message `number`, a model request: what changed since the previous request of its
/// conversation, as `tracer show --changes` words it (`{"previous", "lines"}`); null for any
/// other message, None when the trace has no such message.
pub(crate) async fn changes(
    store: &Store,
    trace: &BuiltTrace,
    number: u64,
) -> Result<Option<Value>> {
    let Some(row) = trace.message(number) else {
        return Ok(None);
    };
    let Some(previous) = trace.previous_of(&row.hop_id).filter(|_| row.request) else {
        return Ok(Some(Value::Null));
    };
    let json_of = |stored| request_json(&recorded(stored));
    let body = json_of(store.hop_by_id(&row.hop_id).await?);
    let changes = match (previous, &body) {
        (Some(previous), Some(body)) => {
            json_of(store.hop_by_id(previous).await?).map(|was| request_changes(&was, body))
        }
        _ => None,
    };
    let before = previous.and_then(|hop| trace.request_number(hop));
    let call = CallChanges {
        hop_id: row.hop_id.clone(),
        previous_hop_id: previous.map(str::to_string),
        changes,
        body_bytes: body.as_ref().map_or(0, |b| b.to_string().len()),
    };
    let lines = call.lines(before.and_then(|n| usize::try_from(n).ok()));
    Ok(Some(json!({"previous": before, "lines": lines})))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse_headers() -> Vec<Header> {
        vec![Header::new("content-type", b"text/event-stream".as_slice())]
    }

    #[test]
    fn an_sse_answer_is_its_events_each_at_the_time_its_last_byte_came() {
        let bytes = b"event: a\ndata: one\n\nevent: b\ndata: two\ndata: lines\n\n";
        let chunks = [
            Chunk {
                offset_ns: 10,
                size: 20,
            },
            Chunk {
                offset_ns: 30,
                size: 100,
            },
        ];
        let events = events(&sse_headers(), bytes, Some(&chunks));
        assert_eq!(
            events,
            json!([
                {"offset_ns": 10, "kind": "sse", "event": "a", "data": "one"},
                {"offset_ns": 30, "kind": "sse", "event": "b", "data": "two\nlines"},
            ])
        );
    }

    #[test]
    fn other_bodies_have_no_events() {
        let headers = vec![Header::new("content-type", b"application/json".as_slice())];
        assert_eq!(events(&headers, b"{}", None), Value::Null);
    }
}
