//! The `?` overlay: the keymap's rows for the mode underneath, and the filter's syntax.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::tui::keymap::{self, Screen};

pub fn render(mode: Screen, frame: &mut Frame, area: Rect) {
    let key = Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD);
    let bindings: Vec<_> = keymap::bindings(mode).collect();
    let key_width = bindings
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(1);
    let mut lines: Vec<Line> = bindings
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(format!("{:<key_width$}  ", b.label), key),
                Span::raw(b.help),
            ])
        })
        .collect();
    if mode == Screen::List {
        lines.push(Line::from(""));
        lines.push(Line::from(
            "filter: words match the title or id; tokens match facts:",
        ));
        lines.push(Line::from(
            "  tool:append  model:qwen  method:tools/call  status:error  role:mcp",
        ));
        lines.push(Line::from(
            "body:TEXT (last) searches messages and bodies too; enter runs it",
        ));
        lines.push(Line::from(
            "typing: ctrl-u clears the line, ctrl-w deletes a word",
        ));
    }
    let width = area.width.saturating_sub(4).min(72);
    let height = (u16::try_from(lines.len()).unwrap_or(u16::MAX) + 2).min(area.height);
    let overlay = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, overlay);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" keys: {} ", mode.title()));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        overlay,
    );
}
