//! The trace list: one row per trace (time, id, title, hops, duration, status, tokens, cost,
//! tools, session: the columns that fit the width, the title keeping its room), only the rows
//! on screen built, and the filter bar.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table, TableState, Wrap};
use tracer_trace::account::summary::trace_name;

use super::{NARROW, clock, fit};

/// From this width on the list has a COST column.
const COSTED: u16 = 100;
/// From this width on the list has a TOKENS column.
const TOKENED: u16 = 110;
/// From this width on the list has a SESSION column (narrower, the title needs the room).
const SESSIONED: u16 = 140;
/// The TOKENS column's width; it is shown only where the title keeps `TITLE_ROOM` beside it.
const TOKENS_WIDTH: u16 = 20;
/// The least room the title keeps before TOKENS gives way.
const TITLE_ROOM: u16 = 24;
use crate::tui::app::App;
use crate::tui::keymap::Screen;
use tracer_trace::TraceStatus;
use tracer_trace::read::dates::{needs_dates, utc_date};
use tracer_trace::words::human_duration;
use tracer_wire::safe_text::{multi_line, one_line};

pub fn render(app: &mut App, frame: &mut Frame, area: Rect) {
    let list = &mut app.list;
    if list.shown.is_empty() {
        let text = if !list.loaded {
            format!("Reading {}…", app.source)
        } else if list.rows.is_empty() {
            format!(
                "No traces in {} yet.\n\nRun `tracer proxy` (or `tracer up`) and send your agent a request: \
                 its trace appears here as the hops arrive.",
                app.source
            )
        } else if let (Some(body), true) = (&app.filter.body, list.body_pending(&app.filter)) {
            match &list.searching {
                Some(_) => format!("Searching titles, messages and bodies for “{body}”…"),
                None => format!("enter searches titles, messages and bodies for “{body}”."),
            }
        } else if list.undecided > 0 {
            format!(
                "Checking {} for “{}”…",
                tracer_trace::words::plural(list.undecided, "trace"),
                app.filter.text
            )
        } else {
            match (&app.filter.body, app.filter.text.contains(':')) {
                // Plain words match titles and ids: say how to look in the messages too.
                (None, false) => format!(
                    "No trace matches “{0}”. /body:{0} searches the messages and bodies too; \
                     esc clears the filter.",
                    app.filter.text
                ),
                _ => format!(
                    "No trace matches “{}”. esc clears the filter.",
                    app.filter.text
                ),
            }
        };
        let paragraph = Paragraph::new(multi_line(&text).into_owned())
            .wrap(Wrap { trim: true })
            .style(Style::default().fg(Color::Gray));
        frame.render_widget(paragraph, inset(area));
        return;
    }
    let height = usize::from(area.height.saturating_sub(1)).max(1);
    if list.selected < list.offset {
        list.offset = list.selected;
    } else if list.selected >= list.offset + height {
        list.offset = list.selected + 1 - height;
    }
    let wide = area.width >= NARROW;
    // The cost column only where it leaves the title its room.
    let costed = area.width >= COSTED;
    // A session column once grouping has named sessions: which run of the host each trace is.
    let sessions = area.width >= SESSIONED && !list.sessions.is_empty();
    // Times alone are ambiguous once the list spans days: then each carries its date.
    let dated = needs_dates(list.rows.iter().map(|row| row.started_unix_ns), None);
    let time_width: u16 = if dated { 19 } else { 8 };
    let end = (list.offset + height).min(list.shown.len());
    // The status column widens for `ok · 3 side calls failed` when a row on screen has one.
    let status_width = list.shown[list.offset..end]
        .iter()
        .filter_map(|&index| list.facts.get(&list.rows[index].id))
        .map(|f| f.summary.status_words().chars().count())
        .max()
        .unwrap_or(0)
        .clamp(14, 24);
    let status_width = u16::try_from(status_width).unwrap_or(14);
    // The tools column widens for the host's own tools beside MCP's (`append (mcp) · Bash (host)`).
    let tools_width = list.shown[list.offset..end]
        .iter()
        .filter_map(|&index| list.facts.get(&list.rows[index].id))
        .filter(|f| !f.summary.host_tools_used.is_empty())
        .filter_map(|f| f.summary.tools_words(","))
        .map(|tools| tools.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(10, 28);
    let tools_width = u16::try_from(tools_width).unwrap_or(10);
    // TOKENS only where the title keeps its room beside every other column (and their gaps).
    let others = time_width + 8 + 4 + 7 + status_width + tools_width + if costed { 9 } else { 0 };
    let gaps = if costed { 8 } else { 7 };
    let tokened = area.width >= TOKENED
        && area.width.saturating_sub(others + gaps + TOKENS_WIDTH) >= TITLE_ROOM;
    let rows: Vec<Row> = list.shown[list.offset..end]
        .iter()
        .map(|&index| {
            let row = &list.rows[index];
            let facts = list.facts.get(&row.id);
            let title = trace_name(row.title.as_deref(), Some(&row.kind), &[])
                .unwrap_or_else(|| format!("({})", row.kind));
            let (hops, duration, status, cost, tools, tokens) = match facts {
                Some(f) => (
                    f.summary.hops.to_string(),
                    f.summary
                        .duration_ns
                        .map_or_else(|| "…".to_string(), human_duration),
                    f.summary.status,
                    f.summary.cost.short().unwrap_or_else(|| "-".to_string()),
                    f.summary.tools_words(",").unwrap_or_default(),
                    f.summary.tokens.short().unwrap_or_else(|| "-".to_string()),
                ),
                None => (
                    "…".into(),
                    "…".into(),
                    TraceStatus::Ok,
                    "…".into(),
                    String::new(),
                    "…".into(),
                ),
            };
            let status_cell = match facts {
                Some(f) if f.summary.side_calls_failed > 0 => Line::from(vec![
                    Span::styled(status.as_str(), status_style(status)),
                    Span::styled(
                        f.summary.status_words()[status.as_str().len()..].to_string(),
                        Style::default().fg(Color::Yellow),
                    ),
                ]),
                Some(_) => Line::from(Span::styled(status.as_str(), status_style(status))),
                None => Line::from(Span::raw("…")),
            };
            let time = if dated {
                format!(
                    "{} {}",
                    utc_date(row.started_unix_ns),
                    clock(row.started_unix_ns)
                )
            } else {
                clock(row.started_unix_ns)
            };
            let mut cells = vec![Line::from(time)];
            if wide {
                cells.push(Line::from(row.id.chars().take(8).collect::<String>()));
            }
            if sessions {
                let label = list.session_of(&row.id).unwrap_or("-");
                let label: String = label.chars().take(8).collect();
                cells.push(Line::from(one_line(&label).into_owned()));
            }
            cells.push(Line::from(one_line(&title).into_owned()));
            cells.push(Line::from(hops));
            if wide {
                cells.push(Line::from(duration));
            }
            cells.push(status_cell);
            if tokened {
                cells.push(Line::from(tokens));
            }
            if costed {
                cells.push(Line::from(cost));
            }
            if wide {
                cells.push(Line::from(one_line(&tools).into_owned()));
            }
            Row::new(cells)
        })
        .collect();
    let (header, widths) = if wide {
        let mut header = vec!["TIME", "ID", "TITLE", "HOPS", "TOOK", "STATUS", "TOOLS"];
        let mut widths = vec![
            Constraint::Length(time_width),
            Constraint::Length(8),
            Constraint::Fill(1),
            Constraint::Length(4),
            Constraint::Length(7),
            Constraint::Length(status_width),
            Constraint::Length(tools_width),
        ];
        if costed {
            header.insert(6, "COST");
            widths.insert(6, Constraint::Length(9));
        }
        if tokened {
            header.insert(6, "TOKENS");
            widths.insert(6, Constraint::Length(TOKENS_WIDTH));
        }
        if sessions {
            header.insert(2, "SESSION");
            widths.insert(2, Constraint::Length(8));
        }
        (header, widths)
    } else {
        (
            vec!["TIME", "TITLE", "HOPS", "STATUS"],
            vec![
                Constraint::Length(time_width),
                Constraint::Fill(1),
                Constraint::Length(4),
                Constraint::Length(status_width),
            ],
        )
    };
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(Style::default().add_modifier(Modifier::BOLD)))
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(Some(list.selected - list.offset));
    frame.render_stateful_widget(table, area, &mut state);
}

fn status_style(status: TraceStatus) -> Style {
    match status {
        TraceStatus::Ok => Style::default().fg(Color::Green),
        TraceStatus::InFlight => Style::default().fg(Color::Yellow),
        _ => Style::default().fg(Color::Red),
    }
}

fn inset(area: Rect) -> Rect {
    Rect {
        x: area.x + 2,
        y: area.y + 1,
        width: area.width.saturating_sub(4),
        height: area.height.saturating_sub(1),
    }
}

/// `/ tool:append█  3 of 40 traces` while typing, or the filter in force.
pub fn filter_line(app: &App) -> Line<'static> {
    let editing = app.mode == Screen::Filter;
    let text = if editing {
        format!("{}█", app.filter_input)
    } else {
        app.filter.text.clone()
    };
    let mut count = format!("  {} of {}", app.list.shown.len(), app.list.rows.len());
    if app.list.searching.is_some() {
        count.push_str(" (searching the bodies)");
    } else if app.list.body_pending(&app.filter) {
        count.push_str(" (enter searches the bodies)");
    } else if app.list.undecided > 0 {
        count.push_str(&format!(" (checking {})", app.list.undecided));
    }
    let label = Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD);
    Line::from(vec![
        Span::styled(" / ", label),
        Span::raw(fit(&text, 60)),
        Span::styled(count, Style::default().fg(Color::Gray)),
    ])
}
