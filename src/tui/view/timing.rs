//! The timing view (`t` on a trace): the trace's waterfall in the diagram's place, one bar per
//! hop from its request's start to its response's end, drawn to the terminal's width; model,
//! tool and host time in their colours, the first chunk of a stream marked `┃`, failures red,
//! tool errors marked, Ollama's own load, prompt and generation time shaded (░ ▒ ▓) at the end
//! of a model bar where the answer reports them.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::fit;
use crate::tui::app::TraceView;
use tracer_trace::explain::timing::{Bar, BarKind, waterfall};
use tracer_trace::words::human_duration;

/// Columns kept on the left for hop numbers.
const GUTTER: u16 = 4;

pub fn render(view: &TraceView, frame: &mut Frame, area: Rect) {
    if area.height < 3 || area.width < GUTTER + 24 {
        return;
    }
    let timing = waterfall(&view.hops, &view.messages);
    let buf = frame.buffer_mut();
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let totals = format!(
        "timing  model {} · tools {} · host's own {} · in all {}",
        human_duration(timing.model_ns),
        human_duration(timing.tool_ns),
        human_duration(timing.host_ns),
        human_duration(timing.span_ns)
    );
    buf.set_string(area.x, area.y, fit(&totals, usize::from(area.width)), bold);
    let label_width = (area.width / 4).clamp(10, 26);
    let plot_x = area.x + GUTTER + label_width + 1;
    let tail = 10;
    let plot_width = area
        .width
        .saturating_sub(GUTTER + label_width + 1 + tail)
        .max(8);
    let axis = Style::default().fg(Color::DarkGray);
    let end_label = human_duration(timing.span_ns);
    let end_width = u16::try_from(end_label.chars().count()).unwrap_or(0);
    buf.set_string(
        plot_x,
        area.y + 1,
        "─".repeat(usize::from(plot_width)),
        axis,
    );
    buf.set_string(plot_x, area.y + 1, "0", axis);
    let end_x = (plot_x + plot_width).saturating_sub(end_width);
    buf.set_string(end_x, area.y + 1, &end_label, axis);
    if timing.bars.iter().any(|b| b.ollama.is_some()) {
        let legend = fit("░load ▒prompt ▓gen", usize::from(GUTTER + label_width));
        buf.set_string(area.x, area.y + 1, legend, Style::default().fg(Color::Gray));
    }
    let span = timing.span_ns.max(1) as f64;
    let column = |ns: i64| -> u16 {
        let cells = (ns.max(0) as f64 / span * f64::from(plot_width)).round();
        plot_x + (cells as u16).min(plot_width.saturating_sub(1))
    };
    let shown_messages = view.shown();
    let current_hop = view.current().map(|m| m.hop_number);
    let bars: Vec<&Bar> = timing
        .bars
        .iter()
        .filter(|bar| bar.hop_number <= shown_messages)
        .collect();
    let rows = usize::from(area.height - 2);
    let selected_row = bars
        .iter()
        .position(|b| Some(b.hop_number) == current_hop)
        .unwrap_or(0);
    let first = (selected_row + 1).saturating_sub(rows);
    for (row, bar) in bars.iter().skip(first).take(rows).enumerate() {
        let y = area.y + 2 + u16::try_from(row).unwrap_or(0);
        let selected = Some(bar.hop_number) == current_hop;
        let mut label_style = Style::default();
        if selected {
            label_style = label_style.add_modifier(Modifier::REVERSED | Modifier::BOLD);
        }
        buf.set_string(area.x, y, format!("{:>3}", bar.hop_number), label_style);
        buf.set_string(
            area.x + GUTTER,
            y,
            fit(&bar.label, usize::from(label_width)),
            label_style,
        );
        let colour = bar_colour(bar);
        let from = column(bar.start_ns);
        let to = bar.end_ns.map_or(plot_x + plot_width - 1, column).max(from);
        let cells = usize::from(to - from + 1);
        let fill = if bar.end_ns.is_some() { "█" } else { "░" };
        buf.set_string(from, y, fill.repeat(cells), Style::default().fg(colour));
        if let Some(phases) = ollama_phases(bar) {
            // Ollama's own load, prompt and generation time, shaded at the end of the bar.
            for x in from..=to {
                let at = bar.start_ns
                    + ((f64::from(x - from) + 0.5) / f64::from(to - from + 1)
                        * bar.duration_ns().unwrap_or(0) as f64) as i64;
                if let Some(symbol) = phases.iter().find(|(a, b, _)| (*a..*b).contains(&at)) {
                    buf.set_string(x, y, symbol.2, Style::default().fg(colour));
                }
            }
        }
        if let Some(first_chunk) = bar.first_chunk_ns {
            let x = column(first_chunk).clamp(from, to);
            buf.set_string(x, y, "┃", Style::default().fg(Color::White).bg(colour));
        }
        let mark = match (bar.failed, bar.tool_error) {
            (true, _) => " ✕",
            (_, true) => " ⚠",
            _ => "",
        };
        let took = bar.duration_ns().map_or("…".to_owned(), human_duration);
        let note = format!(" {took}{mark}");
        let room = usize::from((area.x + area.width).saturating_sub(to + 1));
        let note_style = if bar.failed || bar.tool_error {
            Style::default().fg(Color::Red)
        } else {
            Style::default().fg(Color::Gray)
        };
        buf.set_string(to + 1, y, fit(&note, room), note_style);
    }
}

/// Ollama's reported phases as (from, to, symbol) on the trace's axis, ending where the bar ends.
fn ollama_phases(bar: &Bar) -> Option<Vec<(i64, i64, &'static str)>> {
    let timings = bar.ollama?;
    let end = bar.end_ns?;
    let phases = [
        (timings.eval_ns, "▓"),
        (timings.prompt_eval_ns, "▒"),
        (timings.load_ns, "░"),
    ];
    let mut cursor = end;
    let mut out = Vec::new();
    for (ns, symbol) in phases {
        let Some(ns) = ns.filter(|ns| *ns > 0) else {
            continue;
        };
        let from = cursor.saturating_sub(ns as i64).max(bar.start_ns);
        out.push((from, cursor, symbol));
        cursor = from;
    }
    (!out.is_empty()).then_some(out)
}

fn bar_colour(bar: &Bar) -> Color {
    if bar.failed {
        return Color::Red;
    }
    if bar.tool_error {
        return Color::LightRed;
    }
    match bar.kind {
        BarKind::Host => Color::Gray,
        BarKind::Model => Color::Magenta,
        BarKind::Tool => Color::Green,
        BarKind::Other => Color::Yellow,
    }
}
