//! The TUI says a trace's status is its user request's: Claude Code's buy-milk turn with its
//! account endpoints unreachable reads `ok · 5 side calls failed` in the list and in the trace
//! view's heading, and the host's own tools stand apart from MCP's in the TOOLS column.

use crate::agent_trace::agent_hops;
use crate::offline_side_calls::{claude_code_calling_bash, claude_code_offline};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use tracer::tui::action::{Action, PollToken};
use tracer::tui::app::App;
use tracer::tui::facts::TraceFacts;
use tracer::tui::view;
use tracer_store::traces::TraceRow;
use tracer_trace::RecordedHop;

fn row(id: &str, hops: &[RecordedHop], title: &str) -> TraceRow {
    TraceRow {
        id: format!("{id:0>32}"),
        title: Some(title.into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: None,
        created_by: "correlate".into(),
    }
}

fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    terminal
}

fn text(terminal: &Terminal<TestBackend>) -> String {
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

/// A list of three: the offline run, the run whose model asked for Bash, the plain run.
fn list() -> App {
    let traces = [
        ("c", claude_code_offline(), "Offline: buy milk"),
        ("b", claude_code_calling_bash(), "Bash: buy milk"),
        ("a", agent_hops("claude-code"), "Add buy milk to my notes"),
    ];
    let mut app = App::browser("tracer.db");
    app.start();
    app.update(Action::TracesLoaded {
        rows: traces
            .iter()
            .map(|(id, hops, t)| row(id, hops, t))
            .collect(),
        token: PollToken {
            hops: 30,
            traces: 3,
        },
        partial: false,
        sessions: Default::default(),
    });
    let facts = traces
        .iter()
        .map(|(id, hops, _)| (format!("{id:0>32}"), TraceFacts::of(hops)))
        .collect();
    app.update(Action::FactsLoaded(facts));
    app
}

#[test]
fn the_list_says_ok_with_the_failed_side_calls_and_the_hosts_tools() {
    let mut app = list();
    let terminal = draw(&mut app, 120, 8);
    insta::assert_snapshot!("side_calls_failed_list_120x8", terminal.backend());
    let screen = text(&terminal);
    let offline = screen.lines().find(|l| l.contains("Offline:")).unwrap();
    assert!(offline.contains("ok · 5 side calls failed"), "{screen}");
    let bash = screen.lines().find(|l| l.contains("Bash:")).unwrap();
    assert!(bash.contains("append (mcp) · Bash (host)"), "{screen}");
    // `ok` stays green; the count beside it is not red.
    let buffer = terminal.backend().buffer();
    let y = screen.lines().position(|l| l.contains("Offline:")).unwrap() as u16;
    let x = offline.chars().position(|c| c == '·').unwrap() as u16;
    let ok_x = x - 3;
    assert_eq!(buffer[(ok_x, y)].fg, Color::Green, "{screen}");
    assert_ne!(buffer[(x + 2, y)].fg, Color::Red, "{screen}");
    // `tool:bash` finds the trace whose model asked for the host's Bash.
    for key in "/tool:bash\n".chars() {
        let code = match key {
            '\n' => crossterm::event::KeyCode::Enter,
            c => crossterm::event::KeyCode::Char(c),
        };
        app.update(Action::Key(crossterm::event::KeyEvent::new(
            code,
            crossterm::event::KeyModifiers::NONE,
        )));
    }
    assert_eq!(app.list.shown.len(), 1);
}

#[test]
fn the_trace_view_heading_counts_the_failed_side_calls() {
    let mut app = App::browser("tracer.db");
    let hops = claude_code_offline();
    app.update(Action::TraceLoaded {
        trace_id: format!("{:0>32}", "c"),
        title: Some("Add buy milk to my notes".into()),
        hops,
    });
    let terminal = draw(&mut app, 100, 24);
    insta::assert_snapshot!("side_calls_failed_trace_100x24", terminal.backend());
    let heading = text(&terminal).lines().next().unwrap().to_string();
    assert!(heading.contains("· ok · 5 side calls failed"), "{heading}");
    // A trace without failed side calls is headed as before.
    app.update(Action::TraceLoaded {
        trace_id: format!("{:0>32}", "a"),
        title: Some("Add buy milk to my notes".into()),
        hops: agent_hops("claude-code"),
    });
    let heading = text(&draw(&mut app, 100, 24))
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(!heading.contains("side call"), "{heading}");
}
