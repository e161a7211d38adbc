//! A WebSocket hop's messages in the detail pane, under its response: one line each (direction,
//! time, opcode, size, what it says), and a JSON text message laid out readable under its line.

use ratatui::style::{Color, Style};
use ratatui::text::Line;

use super::json::body_lines;
use tracer_trace::RecordedHop;
use tracer_trace::explain::ws_lines::frame_line;
use tracer_wire::hop::ws_message::opcode;

/// Messages listed; the rest are counted.
const MAX_MESSAGES: usize = 200;

/// The lines, or None when the hop was no WebSocket.
pub fn message_lines(hop: &RecordedHop) -> Option<Vec<Line<'static>>> {
    let record = hop.end.as_ref()?.websocket.as_ref()?;
    let gray = Style::default().fg(Color::Gray);
    let mut out = Vec::new();
    for m in record.messages.iter().take(MAX_MESSAGES) {
        out.push(Line::from(format!(
            "  {}",
            frame_line(m, hop.start.started_unix_ns)
        )));
        let json = m.opcode == opcode::TEXT
            && serde_json::from_slice::<serde_json::Value>(&m.data).is_ok();
        if json {
            for line in body_lines(&m.data) {
                let mut line = line;
                line.spans.insert(0, "      ".into());
                out.push(line);
            }
        }
    }
    let more = record.messages.len().saturating_sub(MAX_MESSAGES) as u64 + record.not_listed;
    if more > 0 {
        out.push(Line::styled(format!("  … and {more} more messages"), gray));
    }
    if record.messages.is_empty() {
        out.push(Line::styled("  (no messages)", gray));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracer_wire::hop::{HopEnd, HopStart, Role, Transport, WsDirection, WsMessage, WsRecord};

    fn message(direction: WsDirection, opcode: u8, data: &[u8]) -> WsMessage {
        WsMessage {
            direction,
            at_unix_ns: 2_000_000,
            opcode,
            size: data.len() as u64,
            wire_size: data.len() as u64 + 6,
            frames: 1,
            compressed: false,
            complete: true,
            data: data.to_vec(),
            error: None,
        }
    }

    #[test]
    fn json_frames_are_laid_out_and_binary_ones_named_by_size_only() {
        let hop = RecordedHop {
            read: Default::default(),
            start: HopStart {
                id: "1".into(),
                route: "model".into(),
                role: Role::Model,
                transport: Transport::Http,
                peer: "127.0.0.1:1".into(),
                method: "GET".into(),
                path: "/v1/responses".into(),
                url: "http://x/v1/responses".into(),
                request_headers: Vec::new(),
                started_unix_ns: 1_000_000,
                run_id: None,
            },
            end: Some(HopEnd {
                websocket: Some(WsRecord {
                    messages: vec![
                        message(WsDirection::ToUpstream, 1, br#"{"type":"response.create"}"#),
                        message(WsDirection::ToClient, 2, &[0xff, 0x00, 0x9f]),
                        message(WsDirection::ToClient, 8, b"\x03\xe8"),
                    ],
                    ..WsRecord::default()
                }),
                ..HopEnd::default()
            }),
        };
        let lines: Vec<String> = message_lines(&hop)
            .unwrap()
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let text = lines.join("\n");
        assert!(
            text.contains("→ +1.0 ms  text 26 B  response.create"),
            "{text}"
        );
        assert!(text.contains("\"type\""), "the JSON laid out: {text}");
        assert!(text.contains("← +1.0 ms  binary 3 B"), "{text}");
        assert!(text.contains("close 2 B  code 1000"), "{text}");
        assert!(!text.contains('\u{fffd}'), "{text}");
    }
}
