//! Side calls are folded by default in the TUI's trace view: the diagram draws the trace's own
//! messages and says how many side calls it folded; `j`/`k` step over them; `s` draws them
//! (marked `side call (title generation)`) and folds them again.

use crate::trace_hops as support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use support::{buy, hop};
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::view;
use tracer_trace::RecordedHop;
use tracer_wire::hop::Role;

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.update(Action::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
    }
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Buy milk with a title request to a small model beside it (no tools, a title system prompt).
fn with_title_call() -> Vec<RecordedHop> {
    let mut hops = buy("a", "buy milk", 0);
    hops.push(
        hop("t1", Role::Model, "/api/chat", 40, 60)
            .bodies(
                json!({"model": "qwen2.5:0.5b", "stream": false, "messages": [
                    {"role": "system", "content": "You are a title generator. Generate a title for the conversation."},
                    {"role": "user", "content": "Add buy milk to my notes"}]}),
                json!({"model": "qwen2.5:0.5b", "message": {"role": "assistant", "content": "Buy milk"}, "done": true}),
            )
            .done(),
    );
    hops
}

#[test]
fn side_calls_are_folded_until_s_shows_them() {
    let hops = with_title_call();
    let mut app = App::browser("tracer.db");
    app.update(Action::TraceLoaded {
        trace_id: hops[0].start.id.clone(),
        title: Some("Add buy milk to my notes".into()),
        hops,
    });
    let view = app.view.as_ref().unwrap();
    let side: Vec<usize> = view
        .messages
        .iter()
        .filter(|m| m.side_call.is_some())
        .map(|m| m.number)
        .collect();
    assert_eq!(
        side.len(),
        2,
        "the title request and its answer are side calls"
    );
    let folded = screen(&mut app);
    assert!(!folded.contains("side call (title"), "{folded}");
    assert!(
        folded.contains("2 side calls folded (s shows them)"),
        "{folded}"
    );
    // Stepping through the trace never lands on a folded message.
    for _ in 0..12 {
        press(&mut app, "j");
        let selected = app.view.as_ref().unwrap().selected;
        assert!(!side.contains(&(selected + 1)), "selected a folded message");
    }
    press(&mut app, "s");
    let shown = screen(&mut app);
    assert!(shown.contains("side call (title"), "{shown}");
    assert!(!shown.contains("folded (s"), "{shown}");
    press(&mut app, "gj");
    press(&mut app, "s");
    assert!(screen(&mut app).contains("2 side calls folded"));
}
