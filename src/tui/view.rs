//! Drawing: a function of the app's state. It splits the screen into a header, the body of the
//! current mode (list or trace), an optional filter bar and the status bar, and puts the help
//! overlay on top. The only state it writes is the list's scroll offset.

mod context;
mod detail;
mod diagram;
mod help;
mod json;
mod list;
mod timing;
mod ws_detail;

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::App;
use super::keymap::{self, Screen};
use tracer_trace::words::plural;
use tracer_wire::safe_text::one_line;

pub use detail::body_part;
pub use json::body_lines;

/// Below this width, columns and panes fold away.
pub const NARROW: u16 = 76;

pub fn render(app: &mut App, frame: &mut Frame) {
    let area = frame.area();
    let filter_bar =
        app.mode == Screen::Filter || (!app.filter.is_empty() && body_mode(app) == Screen::List);
    let [header, body, filter_area, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(u16::from(filter_bar)),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(clean(header_line(app))).style(bar_style()),
        header,
    );
    match body_mode(app) {
        Screen::List => list::render(app, frame, body),
        _ => match app.view.as_ref() {
            Some(view) => {
                // `t` puts the timing waterfall (a totals line and a bar per hop) in the
                // diagram's place.
                let rows = if view.show_timing {
                    view.hops.len() + 1
                } else {
                    view.messages.len()
                };
                let [diagram_area, detail_area] = split_trace(body, rows);
                if view.show_timing {
                    timing::render(view, frame, diagram_area);
                } else {
                    diagram::render(view, frame, diagram_area);
                }
                // `c` and `d` put the request's context or its changes in the message's place.
                match view.pane {
                    crate::tui::app::DetailPane::Message => {
                        detail::render(view, frame, detail_area);
                    }
                    _ => context::render(view, frame, detail_area),
                }
            }
            None => list::render(app, frame, body),
        },
    }
    if filter_bar {
        frame.render_widget(Paragraph::new(clean(list::filter_line(app))), filter_area);
    }
    frame.render_widget(
        Paragraph::new(clean(status_line(app, status))).style(bar_style()),
        status,
    );
    if app.mode == Screen::Help {
        help::render(app.under_help, frame, body);
    }
}

/// The mode whose screen is under the overlays.
fn body_mode(app: &App) -> Screen {
    match app.mode {
        Screen::Help => app.under_help,
        Screen::Filter => Screen::List,
        mode => mode,
    }
}

/// The diagram gets what it needs up to 60% of the height; the message gets the rest.
fn split_trace(body: Rect, messages: usize) -> [Rect; 2] {
    let wanted = u16::try_from(messages + 2).unwrap_or(u16::MAX);
    let most = body.height.saturating_mul(3) / 5;
    Layout::vertical([
        Constraint::Length(wanted.min(most).max(3)),
        Constraint::Min(1),
    ])
    .areas(body)
}

fn bar_style() -> Style {
    Style::default().bg(Color::DarkGray).fg(Color::White)
}

fn header_line(app: &App) -> Line<'static> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut spans = vec![Span::styled(" tracer ", bold)];
    match (body_mode(app), app.view.as_ref()) {
        (Screen::Trace | Screen::Replay, Some(view)) => {
            let short: String = view.trace_id.chars().take(8).collect();
            spans.push(Span::raw(format!("trace {short} ")));
            if let Some(title) = &view.title {
                // A title is one line: its line breaks are spaces, never dropped.
                let title = tracer_trace::read::request_anatomy::title_line(title);
                spans.push(Span::styled(format!("“{title}” "), bold));
            }
            match &view.replay {
                Some(replay) => spans.push(Span::raw(format!(
                    "· step {}/{} {}",
                    replay.step + 1,
                    replay.total,
                    if replay.playing {
                        format!("▶ playing ×{}", replay.speed)
                    } else {
                        "⏸".to_string()
                    }
                ))),
                None => spans.push(Span::raw(format!(
                    "· {}",
                    plural(view.messages.len(), "message")
                ))),
            }
            if let Some(status) = &view.side_calls_failed {
                spans.push(Span::raw(format!(" · {status}")));
            }
        }
        _ => {
            spans.push(Span::raw(format!("{} · ", app.source)));
            let count = app.list.rows.len();
            spans.push(Span::raw(if app.filter.is_empty() {
                plural(count, "trace")
            } else {
                format!("{} of {}", app.list.shown.len(), plural(count, "trace"))
            }));
            if app.follow {
                spans.push(Span::styled(
                    " · following",
                    Style::default().fg(Color::Yellow),
                ));
            }
        }
    }
    Line::from(spans)
}

fn status_line(app: &App, area: Rect) -> Line<'static> {
    if let Some(note) = &app.note {
        return Line::from(format!(" {note}"));
    }
    let key = Style::default().add_modifier(Modifier::BOLD);
    let mut spans = vec![Span::raw(" ")];
    let mut width = 1usize;
    for (label, help) in keymap::hints(app.mode) {
        let item = label.chars().count() + help.chars().count() + 3;
        if width + item > usize::from(area.width) {
            break;
        }
        spans.push(Span::styled(label.to_string(), key));
        spans.push(Span::raw(format!(" {help}  ")));
        width += item;
    }
    Line::from(spans)
}

/// `HH:MM:SS` (UTC) of a Unix-nanosecond time.
pub fn clock(unix_ns: i64) -> String {
    let seconds = unix_ns.div_euclid(1_000_000_000).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A line whose every span is shown through `tracer_wire::safe_text::one_line`: recorded text (titles,
/// routes, headers, bodies) never reaches the terminal with a control or bidi character in it.
pub fn clean(mut line: Line<'static>) -> Line<'static> {
    for span in &mut line.spans {
        if let Cow::Owned(safe) = one_line(&span.content) {
            span.content = Cow::Owned(safe);
        }
    }
    line
}

/// Cuts a text to `width` characters with an ellipsis; control and bidi characters as escapes.
pub fn fit(text: &str, width: usize) -> String {
    let text = one_line(text);
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}
