//! The panes `c` and `d` put in the message's place: what the selected model request is made of
//! (each part's bytes, its ≈ token share and a bar coloured by kind) and what changed since the
//! previous request of its conversation (the facts `tracer show --changes` prints).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::clean;
use crate::tui::app::{DetailPane, TraceView};
use tracer_trace::account::context_shares::ContextShares;
use tracer_trace::account::tokens::thousands;
use tracer_trace::read::changes_by_call::CallChanges;
use tracer_trace::read::request_anatomy::human_bytes;

/// The widest a part's bar is drawn.
const BAR_WIDTH: usize = 30;

pub fn render(view: &TraceView, frame: &mut Frame, area: Rect) {
    let (title, lines) = match view.pane {
        DetailPane::Changes => (
            " changes since the previous request (d) ",
            view.current_changes().map(|c| {
                let number = |hop: &str| {
                    view.messages
                        .iter()
                        .find(|m| m.hop_id == hop)
                        .map_or(0, |m| m.number)
                };
                changes_lines(c, c.previous_hop_id.as_deref().map(number))
            }),
        ),
        _ => (
            " context of the model request (c) ",
            view.current_context().map(context_lines),
        ),
    };
    let loading = view.pane == DetailPane::Changes && view.changes_loading();
    let lines = lines.unwrap_or_else(|| {
        if loading {
            return vec![Line::styled(
                "  (loading the two requests' bodies from the database…)",
                Style::default().fg(Color::Gray),
            )];
        }
        vec![Line::styled(
            "  the selected message is not a model request: select one (j/k)",
            Style::default().fg(Color::Gray),
        )]
    });
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(Style::default().fg(Color::DarkGray))
        .title(title);
    // Tool, server and model names are recorded text: made safe before the terminal.
    let shown: Vec<Line<'static>> = lines.into_iter().map(clean).collect();
    frame.render_widget(
        Paragraph::new(shown)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((view.detail_scroll, 0)),
        area,
    );
}

/// The colour of a part's kind: system, the host's tools, an MCP server's tools, history, rest.
pub fn kind_colour(label: &str) -> Color {
    if label.starts_with("system") {
        Color::Cyan
    } else if label.starts_with("tools: the host's") {
        Color::Blue
    } else if label.starts_with("tools:") {
        Color::Magenta
    } else if label.starts_with("history") || label.starts_with("of the history") {
        Color::Green
    } else {
        Color::Gray
    }
}

/// A heading, then one line per part: label, bytes, ≈ tokens, a bar of its share.
pub fn context_lines(shares: &ContextShares) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let heading = shares.lines().into_iter().next().unwrap_or_default();
    let mut out = vec![Line::styled(heading, bold)];
    let mut parts: Vec<(String, usize)> = shares
        .parts
        .iter()
        .map(|p| (p.label.clone(), p.bytes))
        .collect();
    if let Some((messages, bytes)) = shares.new_since_previous {
        let noun = if messages == 1 { "message" } else { "messages" };
        parts.push((format!("of the history, new: {messages} {noun}"), bytes));
    }
    for (label, bytes) in parts {
        let tokens = shares
            .share(bytes)
            .map_or_else(String::new, |t| format!("≈ {} tokens", thousands(t)));
        let cells = if shares.total_bytes == 0 {
            0
        } else {
            (bytes * BAR_WIDTH)
                .div_ceil(shares.total_bytes)
                .min(BAR_WIDTH)
        };
        let colour = kind_colour(&label);
        out.push(Line::from(vec![
            Span::raw(format!(
                "  {label:<36} {:>9}  {tokens:<17} ",
                human_bytes(bytes)
            )),
            Span::styled("█".repeat(cells), Style::default().fg(colour)),
        ]));
    }
    out
}

/// The changes, one per line, under a heading naming the request it is compared with.
/// `previous` is the message number of the previous request.
pub fn changes_lines(changes: &CallChanges, previous: Option<usize>) -> Vec<Line<'static>> {
    let heading = match previous {
        Some(number) => format!(
            "against request {number}, the previous of its conversation ({} now):",
            human_bytes(changes.body_bytes)
        ),
        None => format!("this request, {}:", human_bytes(changes.body_bytes)),
    };
    let mut out = vec![Line::styled(
        heading,
        Style::default().add_modifier(Modifier::BOLD),
    )];
    out.extend(changes.lines(previous).into_iter().map(|l| {
        // Coloured by what happened (`message 3 added: …`), never by the words quoted after.
        let head = l.split(':').next().unwrap_or_default();
        let colour = if head.ends_with(" added") {
            Color::Green
        } else if head.ends_with(" removed") {
            Color::Red
        } else {
            Color::Yellow
        };
        let line = tracer_wire::safe_text::one_line(&l).into_owned();
        Line::styled(format!("  {line}"), Style::default().fg(colour))
    }));
    out
}
