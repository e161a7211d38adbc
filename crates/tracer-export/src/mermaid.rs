//! A trace as a Mermaid `sequenceDiagram` of its numbered messages, and as a Markdown handout
//! (the diagram, then each message with its explanation and its trimmed body).

use super::body_text::{BodyText, TraceToExport, iso8601_utc};
use tracer_trace::read::request_views::request_views;
use tracer_trace::words::shorten;
use tracer_trace::{Direction, ExplainedMessage, RecordedHop, TokenCounts, explain_trace};
use tracer_wire::base64_fold::{fold_base64, fold_text};
use tracer_wire::content_encoding::readable;
use tracer_wire::safe_text::{multi_line, one_line};

/// Longest message text on an arrow, in characters.
const ARROW_TEXT_MAX: usize = 90;
/// Lines and characters of a body kept in the handout.
const BODY_LINES_MAX: usize = 40;
const BODY_CHARS_MAX: usize = 4000;

/// Mermaid text on an arrow, as Mermaid entity codes where it could mean more than text: `;` (a
/// statement end), `#` (an entity start), `%` (a `%%{init}%%` directive, a `%%` comment), `<`,
/// `>` and `&` (HTML in a label); no newline, control or bidi character (`shorten`).
fn mermaid_text(text: &str) -> String {
    let mut out = String::new();
    for c in shorten(text, ARROW_TEXT_MAX).chars() {
        match c {
            '#' | ';' | '%' | '<' | '>' | '&' => {
                out.push_str(&format!("#{};", u32::from(c)));
            }
            other => out.push(other),
        }
    }
    out
}

/// Markdown text on one line (newlines as spaces), control and bidi characters as escapes, and
/// every character that Markdown or HTML could read as markup backslash-escaped (inline: `\`,
/// backticks, emphasis, links, HTML, entities, tables, strike-through; at the start of the line:
/// headings, lists, rules), so a CommonMark renderer shows it as the text it is.
pub(crate) fn markdown_text(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    let mut digits_so_far = true;
    for (index, c) in one_line(&line).chars().enumerate() {
        let inline = matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '~'
        );
        let block = (index == 0 && matches!(c, '-' | '+' | '=' | '#'))
            || (digits_so_far && index > 0 && matches!(c, '.' | ')'));
        if inline || block {
            out.push('\\');
        }
        digits_so_far = digits_so_far && c.is_ascii_digit();
        out.push(c);
    }
    out
}

/// A trace id in a code span when it is a plain id, else as escaped Markdown text.
fn markdown_id(id: &str) -> String {
    if id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        format!("`{id}`")
    } else {
        markdown_text(id)
    }
}

/// The participants in the order they first appear.
fn participants(messages: &[ExplainedMessage]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for message in messages {
        for party in [message.from.as_str(), message.to.as_str()] {
            if !seen.contains(&party) {
                seen.push(party);
            }
        }
    }
    seen
}

/// A participant's id in the diagram: its name when that is a plain word, else `lane` and its
/// place (the name is then shown with `as`).
fn participant_id(parties: &[&str], name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty() {
        name.to_string()
    } else {
        let at = parties.iter().position(|p| *p == name).unwrap_or(0);
        format!("lane{}", at + 1)
    }
}

/// The diagram of explained messages: `->>` for requests, `-->>` for responses.
fn sequence_diagram(messages: &[ExplainedMessage]) -> String {
    let mut out = String::from("sequenceDiagram\n");
    let parties = participants(messages);
    for party in &parties {
        let id = participant_id(&parties, party);
        if id == *party {
            out.push_str(&format!("    participant {party}\n"));
        } else {
            out.push_str(&format!(
                "    participant {id} as {}\n",
                mermaid_text(party)
            ));
        }
    }
    for message in messages {
        let arrow = match message.direction {
            Direction::Request => "->>",
            Direction::Response => "-->>",
        };
        let text = format!("{}. {} {}", message.number, message.head, message.summary);
        out.push_str(&format!(
            "    {}{arrow}{}: {}\n",
            participant_id(&parties, &message.from),
            participant_id(&parties, &message.to),
            mermaid_text(&text)
        ));
    }
    out
}

/// The diagram of one trace's hops.
pub fn mermaid(hops: &[RecordedHop]) -> String {
    sequence_diagram(&explain_trace(hops))
}

/// A body for reading: JSON pretty-printed (key order kept), cut to a page.
fn trimmed_body(bytes: &[u8]) -> Option<(String, &'static str)> {
    if bytes.is_empty() {
        return None;
    }
    // Base64 (an image, a blob) is folded to its size: a handout is for reading.
    let (text, language) = match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(value) => (
            serde_json::to_string_pretty(&fold_base64(&value)).unwrap_or_default(),
            "json",
        ),
        Err(_) => match BodyText::of(&tracer_wire::hop::BodyCapture::whole(bytes.to_vec())) {
            BodyText::Text(text) => (fold_text(&text), "text"),
            BodyText::Base64(_) => (format!("({} bytes of binary data)", bytes.len()), "text"),
        },
    };
    let total_lines = text.lines().count();
    let mut kept: String = text
        .lines()
        .take(BODY_LINES_MAX)
        .collect::<Vec<_>>()
        .join("\n");
    if kept.chars().count() > BODY_CHARS_MAX {
        kept = kept.chars().take(BODY_CHARS_MAX).collect();
    }
    if kept.len() < text.trim_end().len() {
        kept.push_str(&format!("\n… ({total_lines} lines in all, trimmed)"));
    }
    Some((kept, language))
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// The Markdown handout of one trace.
pub fn markdown_handout(trace: &TraceToExport<'_>) -> String {
    let messages = explain_trace(trace.hops);
    let mut out = String::new();
    let name = tracer_trace::account::summary::trace_name(trace.title, None, trace.hops);
    let title = name.as_deref().unwrap_or("(untitled trace)");
    out.push_str(&format!("# Trace: {}\n\n", markdown_text(title)));
    let started = trace.hops.iter().map(|h| h.start.started_unix_ns).min();
    let tokens = TokenCounts::sum(messages.iter().filter_map(|m| m.tokens.as_ref())).short();
    let cost = tracer_trace::account::cost::CostSum::of_messages(&messages)
        .text()
        .map(|c| {
            format!(
                ", cost: {c} ({})",
                tracer_trace::account::cost::estimate_label()
            )
        });
    out.push_str(&format!(
        "Trace {}, {}, {}{}{}{}.\n\n",
        markdown_id(trace.id),
        tracer_trace::words::plural(trace.hops.len(), "hop"),
        tracer_trace::words::plural(messages.len(), "message"),
        started.map_or_else(String::new, |at| format!(", started {}", iso8601_utc(at))),
        tokens.map_or_else(String::new, |t| format!(", tokens: {t}")),
        cost.unwrap_or_default()
    ));
    // The status and tools where a side call failed or the host ran tools of its own (a
    // handout without either reads as it always did).
    let summary = tracer_trace::summarize(trace.hops);
    if summary.side_calls_failed > 0 || !summary.host_tools_used.is_empty() {
        let mut facts = vec![format!("Status: {}", summary.status_words())];
        if let Some(tools) = summary.tools_words(", ") {
            facts.push(format!("tools: {tools}"));
        }
        out.push_str(&format!("{}.\n\n", markdown_text(&facts.join(" · "))));
    }
    out.push_str("```mermaid\n");
    out.push_str(&sequence_diagram(&messages));
    out.push_str("```\n\n## The messages\n\n");
    out.push_str(&crate::agent_lines::markdown(
        trace.agent_events,
        None,
        markdown_text,
    ));
    let views = request_views(trace.hops);
    for message in &messages {
        out.push_str(&format!(
            "### {}. {} → {}: {}\n\n**{}**\n\n{}\n\n",
            message.number,
            markdown_text(&message.from),
            markdown_text(&message.to),
            markdown_text(&message.head),
            markdown_text(&message.summary),
            markdown_text(&message.explanation)
        ));
        if let Some(tokens) = message.tokens.and_then(|t| t.text()) {
            out.push_str(&format!("Tokens: {}\n\n", markdown_text(&tokens)));
        }
        if message.direction == Direction::Response {
            let lines = super::ws_frames_text::frame_lines(&trace.hops[message.hop_index]);
            if !lines.is_empty() {
                let text = lines.join("\n");
                let fence = fence_for(&text);
                out.push_str(&format!(
                    "WebSocket messages:\n\n{fence}text\n{text}\n{fence}\n\n"
                ));
            }
        }
        if let Some(cost) = &message.cost {
            out.push_str(&format!("Cost: {}\n\n", markdown_text(&cost.text())));
        }
        // What a model request carries and the user's words, which a long body's trimmed
        // start would hide.
        if let Some(view) = views
            .iter()
            .find(|v| v.hop_index == message.hop_index)
            .filter(|_| message.direction == Direction::Request)
        {
            out.push_str(&format!(
                "It carries: {}\n\n",
                markdown_text(&view.anatomy.line())
            ));
            if let Some(words) = &view.user_words {
                out.push_str(&format!(
                    "The user's words: \"{}\"\n\n",
                    markdown_text(words)
                ));
            }
        }
        let hop = &trace.hops[message.hop_index];
        let request_body = match message.direction {
            Direction::Request => Some(trace.request_body(hop)),
            Direction::Response => None,
        };
        let body = hop.end.as_ref().map(|end| match &request_body {
            Some(request_body) => (&hop.start.request_headers, &**request_body),
            None => (&end.response_headers, &end.response_body),
        });
        // As it reads: its Content-Encoding undone, a body that is not text named.
        let readable = body.map(|(headers, body)| readable(headers, body));
        if let Some(note) = readable.as_ref().and_then(|r| r.note()) {
            out.push_str(&format!("*{}*\n\n", markdown_text(&note)));
        }
        let shown = readable.as_ref().and_then(|r| match &r.binary {
            Some(binary) => Some((binary.clone(), "text")),
            None => trimmed_body(r.bytes()),
        });
        if let Some((text, language)) = shown {
            let text = multi_line(&text);
            let fence = fence_for(&text);
            out.push_str(&format!("{fence}{language}\n{text}\n{fence}\n\n"));
        }
        out.push_str(&crate::agent_lines::markdown(
            trace.agent_events,
            Some(message.number),
            markdown_text,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrow_text_is_escaped_and_short() {
        assert_eq!(mermaid_text("a; b #1\nc"), "a#59; b #35;1 c");
        let directive = mermaid_text("%%{init: {'themeCSS': 'x{background:url(//evil)}'}}%%");
        assert!(!directive.contains('%'), "{directive}");
        assert_eq!(mermaid_text("<b>"), "#60;b#62;");
        assert!(mermaid_text(&"x".repeat(500)).chars().count() <= ARROW_TEXT_MAX + 10);
        assert_eq!(fence_for("no ticks"), "```");
        assert_eq!(fence_for("has ```` four"), "`````");
    }

    #[test]
    fn markdown_text_is_text_on_one_line() {
        assert_eq!(
            markdown_text("<img src=x onerror=alert(1)>\n# Owned *now*"),
            "\\<img src=x onerror=alert(1)\\> # Owned \\*now\\*"
        );
        assert_eq!(markdown_text("- item"), "\\- item");
        assert_eq!(markdown_text("12. item"), "12\\. item");
        assert_eq!(markdown_text("a\x1b[2J"), "a\\\\x1b\\[2J");
        assert_eq!(markdown_id("abc-1"), "`abc-1`");
        assert_eq!(markdown_id("a`b"), "a\\`b");
    }

    #[test]
    fn bodies_are_pretty_and_trimmed() {
        let (text, language) = trimmed_body(br#"{"b":1,"a":2}"#).unwrap();
        assert_eq!(language, "json");
        assert_eq!(text, "{\n  \"b\": 1,\n  \"a\": 2\n}");
        let long: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let (text, _) = trimmed_body(long.as_bytes()).unwrap();
        assert!(text.ends_with("(100 lines in all, trimmed)"), "{text}");
        assert!(trimmed_body(b"").is_none());
    }
}
