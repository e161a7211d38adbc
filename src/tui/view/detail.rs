//! The selected message: its line and explanation, its timings (Ollama's own beside those
//! observed on the wire), the tokens a model's answer reported, its headers, its body (coloured JSON) and, for a response, its stream
//! chunks with their arrival times.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::clean;
use super::json::body_lines;
use crate::tui::app::{TraceView, let_go};
use tracer_trace::words::human_duration;
use tracer_trace::{Direction, ExplainedMessage, RecordedHop};
use tracer_wire::content_encoding::readable;
use tracer_wire::dialect::Reading;
use tracer_wire::hop::{BodyCapture, Header};

/// How many stream chunks are listed.
const MAX_CHUNKS: usize = 30;

pub fn render(view: &TraceView, frame: &mut Frame, area: Rect) {
    let Some(message) = view.current() else {
        return;
    };
    let hop = &view.hops[message.hop_index];
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(Style::default().fg(Color::DarkGray))
        .title(format!(" message {} ", message.number));
    let trace_start = view.messages.first().map_or(0, |m| m.at_unix_ns);
    // A request body let go of when the trace was read is drawn as read back (`fetched`).
    let request = message.direction == Direction::Request;
    let body = match hop.end.as_ref() {
        Some(end) if request && let_go(&end.request_body) => {
            match view.fetched.body_of(&hop.start.id) {
                Some(lines) => Body::ReadBack(lines),
                None => Body::Loading,
            }
        }
        _ => Body::Held,
    };
    let mut all = lines(message, hop, trace_start, body);
    // The prompt cache's report goes under the answer's tokens and cost.
    if message.direction == Direction::Response
        && let Some(cache) = view.cache_of(&message.hop_id)
    {
        let at = all
            .iter()
            .position(|l| l.to_string().starts_with("  cost:"))
            .map_or(all.len(), |i| i + 1);
        all.insert(at, Line::from(format!("  {}", cache.line())));
    }
    let stderr = view.stderr_of(message);
    if !stderr.is_empty() {
        all.push(Line::from(""));
        all.push(section(&format!("server stderr ({})", hop.start.route)));
        all.extend(
            stderr
                .into_iter()
                .map(|line| Line::styled(format!("  {line}"), Style::default().fg(Color::Gray))),
        );
    }
    // The agent's own account goes above the timing, headers and body, where it is seen.
    let agent = agent_lines(view, message.number);
    if !agent.is_empty() {
        let at = (all.iter().position(|l| l.to_string() == "timing"))
            .map_or(all.len(), |i| i.saturating_sub(1));
        all.splice(at..at, agent);
    }
    // Recorded text (the stderr lines too) is made safe before it reaches the terminal.
    let shown: Vec<Line<'static>> = all.into_iter().map(clean).collect();
    let paragraph = Paragraph::new(shown)
        .block(block)
        .wrap(Wrap { trim: false })
        .scroll((view.detail_scroll, 0));
    frame.render_widget(paragraph, area);
}

/// The agent's own events around message `number`: those before the first message (on the
/// first), then those that follow it.
fn agent_lines(view: &TraceView, number: usize) -> Vec<Line<'static>> {
    let first = view.messages.first().is_some_and(|m| m.number == number);
    let before: Vec<_> = match first {
        true => view.agent.after(None).collect(),
        false => Vec::new(),
    };
    let after: Vec<_> = view.agent.after(Some(number)).collect();
    let mut out = Vec::new();
    for (title, notes) in [
        ("the agent's own account, before this message", before),
        ("the agent's own account, after this message", after),
    ] {
        if notes.is_empty() {
            continue;
        }
        out.push(Line::from(""));
        out.push(section(title));
        for note in notes {
            out.push(Line::from(format!("  ⋯ {}", note.sentence)));
            out.push(Line::styled(
                format!("    {}", note.detail),
                Style::default().fg(Color::Gray),
            ));
        }
    }
    out
}

fn section(title: &str) -> Line<'static> {
    Line::styled(
        title.to_string(),
        Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
    )
}

/// Where the message's body lines come from.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// The hop holds its body.
    Held,
    /// A request body let go of, read back as these lines.
    ReadBack(&'a [Line<'static>]),
    /// A request body let go of, being read back.
    Loading,
}

/// Everything shown about one message, top to bottom.
pub fn lines(
    message: &ExplainedMessage,
    hop: &RecordedHop,
    trace_start: i64,
    shown: Body<'_>,
) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut out = vec![
        Line::from(vec![
            Span::styled(
                format!("{} {} → {}  ", message.number, message.from, message.to),
                bold,
            ),
            Span::raw(message.head.clone()),
            Span::styled(
                format!("  {}", hop.start.route),
                Style::default().fg(Color::Gray),
            ),
        ]),
        Line::from(message.summary.clone()),
        Line::from(""),
        Line::styled(
            message.explanation.clone(),
            Style::default().fg(Color::White),
        ),
        Line::from(""),
    ];
    out.push(section("timing"));
    out.extend(timing_lines(message, hop, trace_start));
    if let Some(tokens) = message.tokens.and_then(|t| t.text()) {
        out.push(Line::from(format!("  tokens:   {tokens}")));
    }
    if let Some(cost) = &message.cost {
        out.push(Line::from(format!("  cost:     {}", cost.text())));
    }
    let end = hop.end.as_ref();
    let empty = BodyCapture::default();
    let (headers, body) = match (message.direction, end) {
        (Direction::Request, end) => (
            hop.start.request_headers.as_slice(),
            end.map_or(&empty, |e| &e.request_body),
        ),
        (Direction::Response, Some(end)) => (end.response_headers.as_slice(), &end.response_body),
        (Direction::Response, None) => (&[][..], &empty),
    };
    out.push(Line::from(""));
    out.push(section("headers"));
    out.extend(headers.iter().map(header_line));
    out.push(Line::from(""));
    if let Some(messages) = super::ws_detail::message_lines(hop) {
        // A WebSocket's record is its messages (its bodies keep only byte counts).
        let count = end
            .and_then(|e| e.websocket.as_ref())
            .map_or(0, |w| w.messages.len());
        out.push(section(&format!(
            "WebSocket: {}, {} bytes up, {} bytes down",
            tracer_trace::words::plural(count, "message"),
            end.map_or(0, |e| e.request_body.total_len),
            end.map_or(0, |e| e.response_body.total_len)
        )));
        if message.direction == Direction::Response {
            out.extend(messages);
        } else {
            out.push(Line::styled(
                "  (listed under the response)",
                Style::default().fg(Color::Gray),
            ));
        }
        return out;
    }
    let mut title = format!("body ({} bytes", body.total_len);
    if body.truncated {
        title.push_str(&format!(", {} kept", body.bytes.len()));
    }
    title.push(')');
    out.push(section(&title));
    match shown {
        Body::Held => out.extend(body_part(headers, body)),
        Body::ReadBack(lines) => out.extend(lines.iter().cloned()),
        Body::Loading => out.push(Line::styled(
            "(loading the body from the database…)",
            Style::default().fg(Color::Gray),
        )),
    }
    if let (Direction::Response, Some(end)) = (message.direction, end)
        && end.chunks.len() > 1
    {
        out.push(Line::from(""));
        out.push(section(&format!(
            "stream: {}",
            tracer_trace::words::plural(end.chunks.len(), "chunk")
        )));
        for chunk in end.chunks.iter().take(MAX_CHUNKS) {
            out.push(Line::from(format!(
                "  +{:>9}  {:>6} B",
                human_duration(chunk.offset_ns),
                chunk.size
            )));
        }
        if end.chunks.len() > MAX_CHUNKS || end.chunks_truncated {
            out.push(Line::from("  …"));
        }
    }
    out
}

/// A body's lines under its title: shown as it reads (its Content-Encoding undone, a body that
/// is not text named), JSON pretty and coloured.
pub fn body_part(headers: &[Header], body: &BodyCapture) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let readable = readable(headers, body);
    if let Some(note) = readable.note() {
        out.push(Line::styled(note, Style::default().fg(Color::Gray)));
    }
    if body.bytes.is_empty() {
        out.push(Line::styled("(empty)", Style::default().fg(Color::Gray)));
    } else if let Some(binary) = &readable.binary {
        out.push(Line::styled(
            binary.clone(),
            Style::default().fg(Color::Gray),
        ));
    } else {
        out.extend(body_lines(readable.bytes()));
    }
    out
}

fn header_line(header: &Header) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            format!("{}: ", header.name),
            Style::default().fg(Color::Blue),
        ),
        Span::raw(
            header
                .text()
                .map_or_else(|| format!("({} bytes)", header.value.len()), str::to_string),
        ),
    ])
}

/// When it happened; for a response, the observed first byte and end, and Ollama's own timings.
fn timing_lines(
    message: &ExplainedMessage,
    hop: &RecordedHop,
    trace_start: i64,
) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(format!(
        "  at +{} in the trace",
        human_duration(message.at_unix_ns - trace_start)
    ))];
    let start = hop.start.started_unix_ns;
    let Some(end) = hop
        .end
        .as_ref()
        .filter(|_| message.direction == Direction::Response)
    else {
        return out;
    };
    let seen =
        |at: Option<i64>| at.map_or_else(|| "?".to_string(), |at| human_duration(at - start));
    out.push(Line::from(format!(
        "  observed: head {}, first byte {}, done {}",
        seen(end.response_head_unix_ns),
        seen(end.response_first_byte_unix_ns),
        seen(end.response_ended_unix_ns)
    )));
    if let Some(Reading::ModelResponse(reply)) = hop.reading().response.map(|r| r.reading)
        && let Some(t) = reply.timings
    {
        let d = |ns: Option<u64>| {
            ns.map_or_else(
                || "?".into(),
                |ns| human_duration(i64::try_from(ns).unwrap_or(i64::MAX)),
            )
        };
        let n = |count: Option<u64>| count.map_or_else(|| "?".into(), |c| c.to_string());
        out.push(Line::from(format!(
            "  ollama:   total {}, load {}, prompt {} tokens in {}, output {} tokens in {}{}",
            d(t.total_ns),
            d(t.load_ns),
            n(t.prompt_eval_count),
            d(t.prompt_eval_ns),
            n(t.eval_count),
            d(t.eval_ns),
            t.tokens_per_second()
                .map_or_else(String::new, |rate| format!(" ({rate:.1} tokens/s)"))
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use tracer_trace::explain_trace;
    use tracer_wire::hop::{HopEnd, HopStart, HopState, Role, Transport};

    #[test]
    fn a_gzipped_body_is_shown_decoded_with_its_coding_said() {
        let answer = b"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"buy milk\"},\"done\":true}";
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gzip.write_all(answer).unwrap();
        let gzipped = gzip.finish().unwrap();
        let hop = RecordedHop {
            read: Default::default(),
            start: HopStart {
                id: "1".into(),
                route: "model".into(),
                role: Role::Model,
                transport: Transport::Http,
                peer: "127.0.0.1:1".into(),
                method: "POST".into(),
                path: "/api/chat".into(),
                url: "http://127.0.0.1:2/api/chat".into(),
                request_headers: Vec::new(),
                started_unix_ns: 1,
                run_id: None,
            },
            end: Some(HopEnd {
                id: "1".into(),
                state: Some(HopState::Complete),
                status: Some(200),
                response_headers: vec![
                    Header::new("content-type", "application/json"),
                    Header::new("content-encoding", "gzip"),
                ],
                response_body: BodyCapture::whole(gzipped.clone()),
                response_ended_unix_ns: Some(2),
                ..HopEnd::default()
            }),
        };
        let messages = explain_trace(std::slice::from_ref(&hop));
        let shown: Vec<String> = lines(&messages[1], &hop, 0, Body::Held)
            .iter()
            .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let text = shown.join("\n");
        assert!(
            text.contains(&format!("body ({} bytes)", gzipped.len())),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "gzip: {} bytes decoded from {}",
                answer.len(),
                gzipped.len()
            )),
            "{text}"
        );
        assert!(text.contains("buy milk"), "{text}");
    }
}
