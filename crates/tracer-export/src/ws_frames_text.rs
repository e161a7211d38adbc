//! A WebSocket hop's messages as the handouts list them (html and md): one safe line each, at
//! most [`MAX_LINES`], the rest counted on a last line.

use tracer_trace::RecordedHop;
use tracer_trace::explain::ws_lines::frame_line;

const MAX_LINES: usize = 100;

/// The lines (empty when the hop was no WebSocket).
pub(crate) fn frame_lines(hop: &RecordedHop) -> Vec<String> {
    let Some(record) = hop.end.as_ref().and_then(|e| e.websocket.as_ref()) else {
        return Vec::new();
    };
    let mut lines: Vec<String> = record
        .messages
        .iter()
        .take(MAX_LINES)
        .map(|m| frame_line(m, hop.start.started_unix_ns))
        .collect();
    let more = record.messages.len().saturating_sub(MAX_LINES) as u64 + record.not_listed;
    if more > 0 {
        lines.push(format!("… and {more} more messages"));
    }
    lines
}
