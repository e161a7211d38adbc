//! The TUI's context and changes panes over Claude Code's two recorded turns: `c` shows what
//! the selected model request is made of (parts, bytes, ≈ tokens, bars coloured by kind), `d`
//! what changed since the previous request (the facts of `show --changes`); both keys are in the
//! keymap and the help; insta snapshots at 120x30.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use tracer::tui::action::Action;
use tracer::tui::app::{App, DetailPane};
use tracer::tui::keymap::{self, Screen};
use tracer::tui::view;

use crate::cost::claude_code_hops;

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.update(Action::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
    }
}

fn draw(app: &mut App) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    terminal
}

fn claude_code_trace() -> App {
    let hops = claude_code_hops();
    let mut app = App::browser("tracer.db");
    app.update(Action::TraceLoaded {
        trace_id: hops[0].start.id.clone(),
        title: Some("Add buy milk to my notes".into()),
        hops,
    });
    assert_eq!(app.mode, Screen::Trace);
    app
}

#[test]
fn c_shows_the_selected_requests_context_parts_and_c_again_the_message() {
    let mut app = claude_code_trace();
    press(&mut app, "jjc");
    assert_eq!(app.view.as_ref().unwrap().pane, DetailPane::Context);
    let terminal = draw(&mut app);
    insta::assert_snapshot!("context_pane_120x30", terminal.backend());
    let screen = format!("{}", terminal.backend());
    assert!(
        screen.contains("context of the model request (c)"),
        "{screen}"
    );
    assert!(screen.contains("system block 1"), "{screen}");
    assert!(screen.contains("tools: the host's"), "{screen}");
    assert!(screen.contains("history: tool results"), "{screen}");
    assert!(
        screen.contains("of the history, new: 2 messages"),
        "{screen}"
    );
    assert!(screen.contains("≈ "), "{screen}");
    // The bars are coloured by kind: system cyan, the host's tools blue.
    let buffer = terminal.backend().buffer();
    let colours: Vec<Color> = buffer.content().iter().map(|c| c.fg).collect();
    assert!(colours.contains(&Color::Cyan) && colours.contains(&Color::Blue));
    press(&mut app, "c");
    assert_eq!(app.view.as_ref().unwrap().pane, DetailPane::Message);
    let screen = format!("{}", draw(&mut app).backend());
    assert!(!screen.contains("context of the model request"), "{screen}");
}

#[test]
fn d_shows_what_changed_since_the_previous_request() {
    let mut app = claude_code_trace();
    press(&mut app, "d");
    let screen = format!("{}", draw(&mut app).backend());
    assert!(
        screen.contains("the first request of its conversation"),
        "{screen}"
    );
    press(&mut app, "jj");
    let terminal = draw(&mut app);
    insta::assert_snapshot!("changes_pane_120x30", terminal.backend());
    let screen = format!("{}", terminal.backend());
    assert!(
        screen
            .contains("message 3 added: assistant, thinking + text + tool call mcp__notes__append"),
        "{screen}"
    );
    assert!(
        screen.contains("message 4 added: user, tool result for mcp__notes__append"),
        "{screen}"
    );
}

#[test]
fn c_and_d_are_in_the_keymap_and_the_help() {
    for mode in [Screen::Trace, Screen::Replay] {
        let help = |label| {
            keymap::bindings(mode)
                .find(|b| b.label == label)
                .map(|b| b.help)
                .unwrap_or_default()
        };
        assert!(help("c").contains("context"));
        assert!(help("d").contains("changes since the previous request"));
    }
    let mut app = claude_code_trace();
    press(&mut app, "?");
    let screen = format!("{}", draw(&mut app).backend());
    assert!(
        screen.contains("context of the selected model request: its parts"),
        "{screen}"
    );
}
