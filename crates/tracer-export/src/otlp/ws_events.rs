//! A WebSocket hop's messages as events on its span (`websocket.message`): direction, opcode,
//! sizes and, for a text message, its first characters; at most [`MAX_EVENTS`] of them (backends
//! keep about 128 events a span), the rest counted on the last.

use super::model::{Attribute, SpanEvent};
use tracer_trace::RecordedHop;
use tracer_wire::hop::ws_message::opcode;

const MAX_EVENTS: usize = 120;

/// Characters of a text message put on its event.
const TEXT_SHOWN: usize = 1024;

pub(crate) fn message_events(hop: &RecordedHop) -> Vec<SpanEvent> {
    let Some(record) = hop.end.as_ref().and_then(|e| e.websocket.as_ref()) else {
        return Vec::new();
    };
    let mut events: Vec<SpanEvent> = record
        .messages
        .iter()
        .take(MAX_EVENTS)
        .map(|m| {
            let mut attributes = vec![
                Attribute::text("websocket.direction", m.direction.as_str()),
                Attribute::text("websocket.opcode", opcode::name(m.opcode)),
                Attribute::int("websocket.size", i64::try_from(m.size).unwrap_or(i64::MAX)),
                Attribute::int(
                    "websocket.wire_size",
                    i64::try_from(m.wire_size).unwrap_or(i64::MAX),
                ),
            ];
            if m.opcode == opcode::TEXT
                && let Ok(text) = std::str::from_utf8(&m.data)
            {
                let shown: String = text.chars().take(TEXT_SHOWN).collect();
                attributes.push(Attribute::text("websocket.data", shown));
            }
            if let Some((code, reason)) = m.close_status() {
                attributes.push(Attribute::int("websocket.close.code", i64::from(code)));
                attributes.push(Attribute::text("websocket.close.reason", reason));
            }
            SpanEvent {
                at_unix_ns: m.at_unix_ns,
                name: "websocket.message".to_string(),
                attributes,
            }
        })
        .collect();
    let more = record.messages.len().saturating_sub(MAX_EVENTS) as u64 + record.not_listed;
    if more > 0
        && let Some(last) = events.last_mut()
    {
        last.attributes.push(Attribute::int(
            "tracer.websocket.messages_not_evented",
            i64::try_from(more).unwrap_or(i64::MAX),
        ));
    }
    events
}
