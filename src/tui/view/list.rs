//! The trace list: one row per trace (time, id, title, hops, duration, status, cost, tools), only the
//! rows on screen built, and the filter bar.

use crate::trace::summary::trace_name;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table, TableState, Wrap};

use super::{NARROW, clock, fit};

/// From this width on the list has a COST column.
const COSTED: u16 = 100;
use crate::trace::TraceStatus;
use crate::trace::dates::{needs_dates, utc_date};
use crate::trace::explain::human_duration;
use crate::tui::app::App;
use crate::tui::keymap::Screen;
use crate::wire::safe_text::{multi_line, one_line};

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
        } else if list.undecided > 0 {
            format!(
                "Checking {} for “{}”…",
                crate::trace::explain::plural(list.undecided, "trace"),
                app.filter.text
            )
        } else {
            format!(
                "No trace matches “{}”. esc clears the filter.",
                app.filter.text
            )
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
    let sessions = wide && !list.sessions.is_empty();
    // Times alone are ambiguous once the list spans days: then each carries its date.
    let dated = needs_dates(list.rows.iter().map(|row| row.started_unix_ns), None);
    let time_width: u16 = if dated { 19 } else { 8 };
    let end = (list.offset + height).min(list.shown.len());
    let rows: Vec<Row> = list.shown[list.offset..end]
        .iter()
        .map(|&index| {
            let row = &list.rows[index];
            let facts = list.facts.get(&row.id);
            let title = trace_name(row.title.as_deref(), Some(&row.kind), &[])
                .unwrap_or_else(|| format!("({})", row.kind));
            let (hops, duration, status, cost, tools) = match facts {
                Some(f) => (
                    f.summary.hops.to_string(),
                    f.summary
                        .duration_ns
                        .map_or_else(|| "…".to_string(), human_duration),
                    f.summary.status,
                    f.summary.cost.short().unwrap_or_else(|| "-".to_string()),
                    f.tools().join(","),
                ),
                None => (
                    "…".into(),
                    "…".into(),
                    TraceStatus::Ok,
                    "…".into(),
                    String::new(),
                ),
            };
            let status_cell = match facts {
                Some(_) => Span::styled(status.as_str(), status_style(status)),
                None => Span::raw("…"),
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
            cells.push(Line::from(status_cell));
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
            Constraint::Length(14),
            Constraint::Length(10),
        ];
        if costed {
            header.insert(6, "COST");
            widths.insert(6, Constraint::Length(9));
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
                Constraint::Length(14),
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
    if app.list.undecided > 0 {
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
