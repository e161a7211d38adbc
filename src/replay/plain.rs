//! `tracer replay --plain`: the replay's steps as text, for handouts and non-interactive use.
//! Each step is the message's line, its explanation and the start of its body.

use std::fmt::Write;

use tracer_live::load::LoadedTrace;
use tracer_trace::{Direction, explain_trace};
use tracer_wire::safe_text::{multi_line, one_line};

/// How many lines of each body are printed.
pub const BODY_LINES: usize = 40;

/// Every step of the trace, one block per message.
pub fn steps_text(trace: &LoadedTrace) -> String {
    let messages = explain_trace(&trace.hops);
    let mut out = String::new();
    let name = tracer_trace::trace_name(trace.title(), None, &trace.hops);
    let title = one_line(name.as_deref().unwrap_or("(untitled)")).into_owned();
    let _ = writeln!(
        out,
        "trace {}  “{title}”  {}\n",
        trace.row.id,
        tracer_trace::words::plural(messages.len(), "message")
    );
    for message in &messages {
        let _ = writeln!(out, "── step {}/{} ──", message.number, messages.len());
        let _ = writeln!(out, "{}", message.line());
        for line in wrap(&message.explanation, 78) {
            let _ = writeln!(out, "  {line}");
        }
        let hop = &trace.hops[message.hop_index];
        let body = hop.end.as_ref().map(|end| match message.direction {
            Direction::Request => (&hop.start.request_headers, &end.request_body),
            Direction::Response => (&end.response_headers, &end.response_body),
        });
        // As it reads: its Content-Encoding undone, a body that is not text named.
        let readable = body
            .filter(|(_, b)| !b.bytes.is_empty())
            .map(|(headers, body)| tracer_wire::content_encoding::readable(headers, body));
        if let Some(note) = readable.as_ref().and_then(|r| r.note()) {
            let _ = writeln!(out, "    ({})", multi_line(&note));
        }
        if let Some(body) = readable {
            let text = match &body.binary {
                Some(binary) => std::borrow::Cow::Owned(binary.clone()),
                None => String::from_utf8_lossy(body.bytes()),
            };
            let pretty = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| serde_json::to_string_pretty(&v).ok())
                .unwrap_or_else(|| text.into_owned());
            let pretty = multi_line(&pretty);
            let lines: Vec<&str> = pretty.lines().collect();
            for line in lines.iter().take(BODY_LINES) {
                let _ = writeln!(out, "    {line}");
            }
            if lines.len() > BODY_LINES {
                let _ = writeln!(out, "    … {} more lines", lines.len() - BODY_LINES);
            }
        }
        out.push('\n');
    }
    out
}

/// Splits text into lines of at most `width` characters at spaces (a longer word stays whole).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wraps_at_spaces_and_keeps_long_words() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("abcdefgh x", 4), ["abcdefgh", "x"]);
        assert!(wrap("  ", 4).is_empty());
    }
}
