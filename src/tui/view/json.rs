//! Bodies for people: JSON pretty-printed and coloured (keys, strings, numbers, literals), NDJSON
//! and SSE streams one coloured record per line, anything else as text. Bounded: only the first
//! `MAX_BYTES` are read and `MAX_LINES` drawn.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;
use tracer_wire::base64_fold::{fold_base64, fold_text};

/// How much of a body is read for display.
pub const MAX_BYTES: usize = 256 * 1024;
/// How many lines of a body are drawn.
pub const MAX_LINES: usize = 400;

fn key() -> Style {
    Style::default().fg(Color::Cyan)
}
fn string() -> Style {
    Style::default().fg(Color::Green)
}
fn number() -> Style {
    Style::default().fg(Color::Yellow)
}
fn literal() -> Style {
    Style::default().fg(Color::Magenta)
}

/// A body's lines: JSON, a stream of JSON records, or text.
pub fn body_lines(bytes: &[u8]) -> Vec<Line<'static>> {
    let cut = &bytes[..bytes.len().min(MAX_BYTES)];
    let text = String::from_utf8_lossy(cut);
    // Base64 (an image, a blob) is folded to its size, in JSON and in each line of a stream.
    let mut lines = match serde_json::from_str::<Value>(&text) {
        Ok(value) => {
            let mut lines = Vec::new();
            pretty(&fold_base64(&value), 0, Vec::new(), &mut lines);
            lines
        }
        Err(_) => fold_text(&text)
            .lines()
            .take(MAX_LINES + 1)
            .map(stream_line)
            .collect(),
    };
    if lines.len() > MAX_LINES {
        let more = lines.len() - MAX_LINES;
        lines.truncate(MAX_LINES);
        lines.push(Line::styled(
            format!("… {more}+ more lines"),
            Style::default().fg(Color::Gray),
        ));
    }
    if bytes.len() > MAX_BYTES {
        lines.push(Line::styled(
            format!("… {} more bytes not shown", bytes.len() - MAX_BYTES),
            Style::default().fg(Color::Gray),
        ));
    }
    lines
}

/// One line of a stream: an SSE field or an NDJSON record, coloured when it holds JSON.
fn stream_line(line: &str) -> Line<'static> {
    let (prefix, rest) = match line.split_once(':') {
        Some((field, rest)) if matches!(field, "data" | "event" | "id" | "retry") => {
            (format!("{field}:"), rest)
        }
        _ => (String::new(), line),
    };
    match serde_json::from_str::<Value>(rest.trim()) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => {
            let mut spans = Vec::new();
            if !prefix.is_empty() {
                spans.push(Span::styled(prefix, key()));
                spans.push(Span::raw(" "));
            }
            compact(&value, &mut spans);
            Line::from(spans)
        }
        _ => Line::from(line.to_string()),
    }
}

fn scalar(value: &Value) -> Span<'static> {
    match value {
        Value::String(s) => Span::styled(Value::String(s.clone()).to_string(), string()),
        Value::Number(n) => Span::styled(n.to_string(), number()),
        other => Span::styled(other.to_string(), literal()),
    }
}

fn compact(value: &Value, spans: &mut Vec<Span<'static>>) {
    match value {
        Value::Object(map) => {
            spans.push(Span::raw("{"));
            for (i, (name, item)) in map.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::raw(","));
                }
                spans.push(Span::styled(Value::String(name.clone()).to_string(), key()));
                spans.push(Span::raw(":"));
                compact(item, spans);
            }
            spans.push(Span::raw("}"));
        }
        Value::Array(items) => {
            spans.push(Span::raw("["));
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::raw(","));
                }
                compact(item, spans);
            }
            spans.push(Span::raw("]"));
        }
        other => spans.push(scalar(other)),
    }
}

/// Pretty-prints `value` at `depth`; `lead` is what goes before it on its first line.
fn pretty(value: &Value, depth: usize, lead: Vec<Span<'static>>, out: &mut Vec<Line<'static>>) {
    if out.len() > MAX_LINES {
        return;
    }
    let indent = "  ".repeat(depth);
    let (open, close, empty) = match value {
        Value::Object(map) => ("{", "}", map.is_empty()),
        Value::Array(items) => ("[", "]", items.is_empty()),
        other => {
            let mut spans = vec![Span::raw(indent)];
            spans.extend(lead);
            spans.push(scalar(other));
            out.push(Line::from(spans));
            return;
        }
    };
    let mut first = vec![Span::raw(indent.clone())];
    first.extend(lead);
    if empty {
        first.push(Span::raw(format!("{open}{close}")));
        out.push(Line::from(first));
        return;
    }
    first.push(Span::raw(open));
    out.push(Line::from(first));
    let items: Vec<(Option<&String>, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (Some(k), v)).collect(),
        Value::Array(items) => items.iter().map(|v| (None, v)).collect(),
        _ => Vec::new(),
    };
    let count = items.len();
    for (i, (name, item)) in items.into_iter().enumerate() {
        let lead = match name {
            Some(name) => vec![
                Span::styled(Value::String(name.clone()).to_string(), key()),
                Span::raw(": "),
            ],
            None => Vec::new(),
        };
        pretty(item, depth + 1, lead, out);
        if i + 1 < count
            && let Some(last) = out.last_mut()
        {
            last.spans.push(Span::raw(","));
        }
    }
    out.push(Line::from(format!("{indent}{close}")));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn json_is_pretty_in_key_order_and_streams_are_per_record() {
        let lines = body_lines(br#"{"b":1,"a":[true,"x"],"e":{}}"#);
        assert_eq!(
            text(&lines),
            [
                "{",
                "  \"b\": 1,",
                "  \"a\": [",
                "    true,",
                "    \"x\"",
                "  ],",
                "  \"e\": {}",
                "}"
            ]
        );
        assert_eq!(lines[1].spans[1].style, key());
        let lines = body_lines(b"{\"n\":1}\n{\"n\":2}\n");
        assert_eq!(text(&lines), ["{\"n\":1}", "{\"n\":2}"]);
        let lines = body_lines(b"event: message\ndata: {\"id\":1}\n");
        assert_eq!(text(&lines), ["event: message", "data: {\"id\":1}"]);
    }
}
