//! A step through a trace and its frame look at as many messages at any length: the same work
//! at the bottom of a 2,000-message trace as at the top of a 40-message one; stepping keeps its
//! order with side calls folded.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use crate::tui::action::Action;
use crate::tui::app::App;
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

thread_local! {
    /// Looks at which messages are drawn, on this thread (see `looked`).
    pub static LOOKS: Cell<usize> = const { Cell::new(0) };
}

/// A tool call through an MCP route, `i` ms after the trace's start.
fn tool_call(i: usize) -> RecordedHop {
    let id = format!("{i:0>32}");
    let at = 1_800_000_000_000_000_000 + i64::try_from(i).unwrap() * 1_000_000;
    let request = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
        "params": {"name": "read", "arguments": {"n": i}}});
    let response = json!({"jsonrpc": "2.0", "id": i,
        "result": {"content": [{"type": "text", "text": "ok"}], "isError": false}});
    let json = || vec![Header::new("content-type", "application/json")];
    RecordedHop {
        read: Default::default(),
        start: HopStart {
            id: id.clone(),
            route: "mcp".into(),
            role: Role::Mcp,
            transport: Transport::Http,
            peer: "127.0.0.1:1".into(),
            method: "POST".into(),
            path: "/mcp".into(),
            url: "http://127.0.0.1:2/mcp".into(),
            request_headers: json(),
            started_unix_ns: at,
            run_id: None,
        },
        end: Some(HopEnd {
            id,
            state: Some(HopState::Complete),
            status: Some(200),
            response_headers: json(),
            request_body: BodyCapture::whole(request.to_string().into_bytes()),
            response_body: BodyCapture::whole(response.to_string().into_bytes()),
            response_ended_unix_ns: Some(at + 500_000),
            ..HopEnd::default()
        }),
    }
}

fn opened(hops: usize) -> App {
    let mut app = App::browser("tracer.db");
    app.update(Action::TraceLoaded {
        trace_id: "t".into(),
        title: None,
        hops: (0..hops).map(tool_call).collect(),
    });
    app
}

fn key(code: KeyCode) -> Action {
    Action::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// The looks one `↓` (update and frame) takes, and the message selected after it.
fn one_step(app: &mut App, terminal: &mut Terminal<TestBackend>) -> (usize, usize) {
    LOOKS.with(|looks| looks.set(0));
    app.update(key(KeyCode::Down));
    terminal
        .draw(|frame| crate::tui::view::render(app, frame))
        .unwrap();
    let selected = app.view.as_ref().unwrap().selected;
    (LOOKS.with(Cell::get), selected)
}

#[test]
fn a_step_looks_at_as_many_messages_at_the_top_of_a_short_trace_as_at_the_bottom_of_a_long_one() {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut short = opened(20);
    let (at_top, selected) = one_step(&mut short, &mut terminal);
    assert_eq!(selected, 1);
    let mut long = opened(1_000);
    long.update(key(KeyCode::Char('G')));
    for _ in 0..5 {
        long.update(key(KeyCode::Up));
    }
    let (at_bottom, selected) = one_step(&mut long, &mut terminal);
    assert_eq!(selected, 1_995, "2,000 messages, the 6th from the end");
    // About two looks per row drawn (the diagram has 22), whatever the length.
    assert!(at_top <= 64, "{at_top} looks at the top");
    assert_eq!(
        at_bottom, at_top,
        "a step at the bottom looks as much as at the top"
    );
}

#[test]
fn stepping_and_jumping_reach_every_drawn_message_in_order() {
    let mut app = opened(3);
    let view = app.view.as_mut().unwrap();
    assert_eq!(view.visible(), [0, 1, 2, 3, 4, 5]);
    let mut seen = vec![view.selected];
    for _ in 0..7 {
        view.step(true);
        seen.push(view.selected);
    }
    assert_eq!(seen, [0, 1, 2, 3, 4, 5, 5, 5]);
    view.step(false);
    assert_eq!(view.selected, 4);
    view.select_visible(usize::MAX);
    assert_eq!(view.selected, 5);
    view.select_visible(0);
    assert_eq!(view.selected, 0);
    assert_eq!(view.folded(), 0);
}

#[test]
fn fork_here_says_the_fork_command_for_the_selected_message() {
    let mut app = opened(3);
    app.update(key(KeyCode::Down));
    app.update(key(KeyCode::Char('F')));
    let note = app.note.clone().unwrap_or_default();
    assert!(
        note.starts_with("fork from here: tracer --db tracer.db fork t --at 2 "),
        "{note}"
    );
    let mut replayed = opened(3);
    replayed.update(key(KeyCode::Char('r')));
    replayed.update(key(KeyCode::Char(' ')));
    replayed.update(key(KeyCode::Char(' ')));
    replayed.update(key(KeyCode::Char('F')));
    let note = replayed.note.clone().unwrap_or_default();
    assert!(note.contains("fork t --at 3 "), "{note}");
}
