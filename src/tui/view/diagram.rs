//! The sequence diagram: a lane per process (You, Agent, Model, each MCP server), one row per
//! message with its number and an arrow (→ request, ← response) labelled with its summary;
//! failures red, the selected message highlighted. In a replay, only the messages so far.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::fit;
use crate::tui::app::{Arrow, Tone, TraceView};
use tracer_trace::Direction;

/// Columns kept on the left for message numbers.
const GUTTER: u16 = 4;

pub fn render(view: &TraceView, frame: &mut Frame, area: Rect) {
    if area.height < 2 || area.width <= GUTTER + 4 || view.lanes.is_empty() {
        return;
    }
    let buf = frame.buffer_mut();
    let lanes = lane_centres(area, &view.lanes);
    let lane_width = match lanes.as_slice() {
        [first, second, ..] => second - first,
        _ => area.width - GUTTER,
    };
    let name_style = Style::default().add_modifier(Modifier::BOLD);
    for (name, &x) in view.lanes.iter().zip(&lanes) {
        let name = fit(name, usize::from(lane_width.saturating_sub(1)).max(1));
        let width = u16::try_from(name.chars().count()).unwrap_or(0);
        let left = x.saturating_sub(width / 2).max(area.x + GUTTER);
        buf.set_string(left, area.y, name, name_style);
    }
    // Only the rows drawn are looked at: a step costs the same at any length.
    let current = view.current().map_or(0, |m| m.number - 1);
    let at = Some(view.visible_from(current)).filter(|&p| p < view.visible_len());
    let at = at.unwrap_or(0);
    let folded = view.folded();
    // The last row says what is folded away, when anything is.
    let rows = usize::from(area.height - 1 - u16::from(folded > 0 && area.height > 2));
    let first = if at < rows { 0 } else { at + 1 - rows };
    if folded > 0 && area.height > 2 {
        let note = match folded {
            1 => "1 side call folded (s shows it)".to_string(),
            n => format!("{n} side calls folded (s shows them)"),
        };
        let room = usize::from(area.width - GUTTER);
        let dim = Style::default().fg(Color::DarkGray);
        let y = area.y + area.height - 1;
        buf.set_string(area.x + GUTTER, y, fit(&note, room), dim);
    }
    let rail = Style::default().fg(Color::DarkGray);
    for row in 0..rows {
        let Some(index) = view.visible_at(first + row) else {
            break;
        };
        let y = area.y + 1 + u16::try_from(row).unwrap_or(0);
        for &x in &lanes {
            buf.set_string(x, y, "│", rail);
        }
        let message = &view.messages[index];
        let arrow = view.arrows[index];
        let selected = index == current;
        let mut style = match (arrow.tone, message.direction) {
            (Tone::Failed, _) => Style::default().fg(Color::Red),
            (Tone::InFlight, _) => Style::default().fg(Color::Yellow),
            (Tone::Normal, Direction::Request) => Style::default(),
            (Tone::Normal, Direction::Response) => Style::default().fg(Color::Cyan),
        };
        if selected {
            style = style.add_modifier(Modifier::REVERSED | Modifier::BOLD);
        }
        buf.set_string(area.x, y, format!("{:>3}", message.number), style);
        // A message the agent's own events follow says how many (its detail lists them).
        let notes = view.agent.after(Some(message.number)).count();
        let label = match notes {
            0 => std::borrow::Cow::Borrowed(message.summary.as_str()),
            n => std::borrow::Cow::Owned(format!("{} ⋯{n} agent", message.summary)),
        };
        draw_arrow(buf, y, arrow, &lanes, &label, style);
    }
}

/// The x of each lane's line: the first and last just inside the edges (room for their names),
/// the others evenly between.
fn lane_centres(area: Rect, names: &[String]) -> Vec<u16> {
    let half = |name: Option<&String>| {
        let width = name.map_or(0, |n| n.chars().count()).min(12);
        u16::try_from(width / 2).unwrap_or(0).max(2)
    };
    let left = area.x + GUTTER + half(names.first());
    let right = (area.x + area.width).saturating_sub(1 + half(names.last()));
    let gaps = u16::try_from(names.len().saturating_sub(1)).unwrap_or(1);
    if gaps == 0 || right <= left {
        return vec![left; names.len()];
    }
    let step = (right - left) / gaps;
    (0..=gaps).map(|i| left + step * i).collect()
}

fn draw_arrow(buf: &mut Buffer, y: u16, arrow: Arrow, lanes: &[u16], label: &str, style: Style) {
    let (Some(&from), Some(&to)) = (lanes.get(arrow.from), lanes.get(arrow.to)) else {
        return;
    };
    let (left, right) = (from.min(to), from.max(to));
    if right <= left + 1 {
        return;
    }
    let span = usize::from(right - left - 1);
    let mut line: Vec<char> = vec!['─'; span];
    if to > from {
        line[span - 1] = '▶';
    } else {
        line[0] = '◀';
    }
    // The label sits on the arrow, leaving its head and a dash on each side.
    let room = span.saturating_sub(4);
    if room >= 3 {
        let text: Vec<char> = format!(" {} ", fit(label, room - 2)).chars().collect();
        let start = 2;
        for (offset, c) in text.into_iter().enumerate() {
            if start + offset < span - 1 {
                line[start + offset] = c;
            }
        }
    }
    buf.set_string(left + 1, y, line.into_iter().collect::<String>(), style);
}
