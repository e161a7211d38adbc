//! The TUI through its update function and its drawing: insta snapshots of ratatui's TestBackend
//! at fixed sizes (list, trace view, every replay step of buy milk, help, filter, empty
//! database, 60 columns), styles that snapshots cannot show, and key handling.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::trace_hops as support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use serde_json::json;
use support::{BASE, MS, buy, hop};
use tracer::tui::action::{Action, Effect, PollToken};
use tracer::tui::app::App;
use tracer::tui::facts::TraceFacts;
use tracer::tui::keymap::Screen;
use tracer::tui::view;
use tracer_store::traces::TraceRow;
use tracer_trace::RecordedHop;
use tracer_wire::hop::{HopState, Role};

pub(crate) fn key(code: KeyCode) -> Action {
    Action::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub(crate) fn press(app: &mut App, keys: &str) -> Vec<Effect> {
    keys.chars()
        .flat_map(|c| app.update(key(KeyCode::Char(c))))
        .collect()
}

fn row(hops: &[RecordedHop], title: &str) -> TraceRow {
    TraceRow {
        id: hops[0].start.id.clone(),
        title: Some(title.into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: hops[0].end.as_ref().and_then(|e| e.response_ended_unix_ns),
        created_by: "correlate".into(),
    }
}

/// A trace whose tool call fails with a JSON-RPC error.
fn broken(t: i64) -> Vec<RecordedHop> {
    vec![
        hop("c1", Role::Agent, "/agent", t, t + 300)
            .bodies(json!({"message": "Clear my notes"}), json!({"reply": "I could not."}))
            .done(),
        hop("c2", Role::Mcp, "/mcp", t + 10, t + 20)
            .bodies(
                json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "clear", "arguments": {}}}),
                json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown tool: clear"}}),
            )
            .done(),
    ]
}

/// The three traces of the list, newest first, with their hops.
pub(crate) fn traces() -> Vec<(TraceRow, Vec<RecordedHop>)> {
    let milk = buy("a", "buy milk", 0);
    let eggs = buy("b", "eggs", 5_000);
    let clear = broken(9_000);
    vec![
        (row(&clear, "Clear my notes"), clear),
        (row(&eggs, "Add eggs to my notes"), eggs),
        (row(&milk, "Add buy milk to my notes"), milk),
    ]
}

/// A browser that has polled once and read the facts of every trace.
pub(crate) fn loaded_app() -> App {
    let mut app = App::browser("tracer.db");
    assert!(matches!(app.start()[..], [Effect::Poll { last: None }]));
    let traces = traces();
    let rows = traces.iter().map(|(row, _)| row.clone()).collect();
    let effects = app.update(Action::TracesLoaded {
        rows,
        token: PollToken {
            hops: 12,
            traces: 3,
        },
        partial: false,
        sessions: Default::default(),
    });
    assert_eq!(
        effects.len(),
        1,
        "one read of the facts on screen: {effects:?}"
    );
    let facts = traces
        .iter()
        .map(|(row, hops)| (row.id.clone(), TraceFacts::of(hops)))
        .collect();
    assert!(app.update(Action::FactsLoaded(facts)).is_empty());
    app
}

fn open_milk(app: &mut App) {
    let milk = buy("a", "buy milk", 0);
    app.update(Action::TraceLoaded {
        trace_id: milk[0].start.id.clone(),
        title: Some("Add buy milk to my notes".into()),
        hops: milk,
    });
}

pub(crate) fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    terminal
}

#[test]
fn list_at_80_and_60_columns() {
    let mut app = loaded_app();
    app.update(key(KeyCode::Char('j')));
    let terminal = draw(&mut app, 80, 24);
    insta::assert_snapshot!("list_80x24", terminal.backend());
    // The selected row is reversed; a failed trace's status is red.
    let buffer = terminal.backend().buffer();
    assert!(buffer[(1, 3)].modifier.contains(Modifier::REVERSED));
    assert!(!buffer[(1, 2)].modifier.contains(Modifier::REVERSED));
    let red = (0..80).any(|x| buffer[(x, 2)].fg == Color::Red);
    assert!(red, "the protocol error is red");
    insta::assert_snapshot!("list_60x24", draw(&mut app, 60, 24).backend());
}

#[test]
fn empty_database_and_before_the_first_poll() {
    let mut app = App::browser("tracer.db");
    insta::assert_snapshot!("loading_80x24", draw(&mut app, 80, 24).backend());
    app.update(Action::TracesLoaded {
        rows: Vec::new(),
        token: PollToken::default(),
        partial: false,
        sessions: Default::default(),
    });
    insta::assert_snapshot!("empty_80x24", draw(&mut app, 80, 24).backend());
}

#[test]
fn trace_view_of_buy_milk() {
    let mut app = loaded_app();
    press(&mut app, "jj");
    let effects = app.update(key(KeyCode::Enter));
    let milk_id = buy("a", "buy milk", 0)[0].start.id.clone();
    assert_eq!(effects, [Effect::LoadTrace(milk_id)]);
    open_milk(&mut app);
    assert_eq!(app.mode, Screen::Trace);
    press(&mut app, "jjjj");
    let terminal = draw(&mut app, 80, 24);
    insta::assert_snapshot!("trace_80x24", terminal.backend());
    insta::assert_snapshot!("trace_60x24", draw(&mut app, 60, 24).backend());
    press(&mut app, "J");
    insta::assert_snapshot!("trace_80x24_scrolled", draw(&mut app, 80, 24).backend());
}

#[test]
fn a_failed_call_is_red_in_the_diagram() {
    let mut app = loaded_app();
    let clear = broken(9_000);
    app.update(Action::TraceLoaded {
        trace_id: clear[0].start.id.clone(),
        title: Some("Clear my notes".into()),
        hops: clear,
    });
    let terminal = draw(&mut app, 80, 24);
    insta::assert_snapshot!("trace_failed_80x24", terminal.backend());
    let buffer = terminal.backend().buffer();
    // Message 3 (row 5) is the JSON-RPC error coming back.
    assert_eq!(buffer.cell((2, 4)).unwrap().symbol(), "3");
    assert_eq!(buffer[(2, 4)].fg, Color::Red);
    assert_ne!(buffer[(2, 3)].fg, Color::Red);
}

#[test]
fn every_replay_step_of_buy_milk() {
    let mut app = App::replay(
        "buy-milk.json",
        support::loaded(
            &buy("a", "buy milk", 0)[0].start.id,
            Some("Add buy milk to my notes"),
            buy("a", "buy milk", 0),
        ),
        1.0,
    );
    assert!(app.start().is_empty(), "a replay reads no database");
    for step in 1..=10 {
        let name = format!("replay_step_{step:02}");
        insta::assert_snapshot!(name, draw(&mut app, 80, 24).backend());
        app.update(key(KeyCode::Char(' ')));
    }
    let replay = app.view.as_ref().unwrap().replay.clone().unwrap();
    assert_eq!(replay.step, 9, "stays on the last step");
}

#[test]
fn help_is_drawn_from_the_keymap() {
    let mut app = loaded_app();
    press(&mut app, "?");
    assert_eq!(app.mode, Screen::Help);
    insta::assert_snapshot!("help_list_80x24", draw(&mut app, 80, 24).backend());
    app.update(key(KeyCode::Esc));
    assert_eq!(app.mode, Screen::List);
}

#[test]
fn filter_by_tool_and_by_text() {
    let mut app = loaded_app();
    press(&mut app, "/tool:append");
    assert_eq!(app.mode, Screen::Filter);
    assert_eq!(app.list.shown.len(), 2);
    insta::assert_snapshot!("filter_typing_80x24", draw(&mut app, 80, 24).backend());
    app.update(key(KeyCode::Enter));
    assert_eq!(app.mode, Screen::List);
    // Plain words match the title; status: matches errors.
    press(&mut app, "/");
    for _ in 0.."tool:append".len() {
        app.update(key(KeyCode::Backspace));
    }
    press(&mut app, "status:error");
    app.update(key(KeyCode::Enter));
    assert_eq!(
        app.list.selected_row().unwrap().title.as_deref(),
        Some("Clear my notes")
    );
    insta::assert_snapshot!("filter_applied_80x24", draw(&mut app, 80, 24).backend());
    // esc while typing restores the filter in force; esc in the list clears it.
    press(&mut app, "/milk");
    assert_eq!(app.list.shown.len(), 0);
    app.update(key(KeyCode::Esc));
    assert_eq!(app.filter.text, "status:error");
    app.update(key(KeyCode::Esc));
    assert_eq!(app.list.shown.len(), 3);
}

#[test]
fn filter_tokens_ask_for_facts_they_lack() {
    let mut app = App::browser("tracer.db");
    let traces = traces();
    let rows: Vec<TraceRow> = traces.iter().map(|(row, _)| row.clone()).collect();
    app.update(Action::TracesLoaded {
        rows,
        token: PollToken::default(),
        partial: false,
        sessions: Default::default(),
    });
    // The facts of the screen were asked for; a token filter waits for them.
    press(&mut app, "/role:mcp");
    assert_eq!((app.list.shown.len(), app.list.undecided), (0, 3));
    let facts = traces
        .iter()
        .map(|(row, hops)| (row.id.clone(), TraceFacts::of(hops)))
        .collect();
    app.update(Action::FactsLoaded(facts));
    assert_eq!((app.list.shown.len(), app.list.undecided), (3, 0));
}

#[test]
fn keys_through_update() {
    let mut app = loaded_app();
    press(&mut app, "G");
    assert_eq!(app.list.selected, 2);
    press(&mut app, "kkkk");
    assert_eq!(app.list.selected, 0, "stops at the top");
    let clear_id = app.list.selected_row().unwrap().id.clone();
    assert_eq!(press(&mut app, "e"), [Effect::Export(clear_id.clone())]);
    app.update(Action::Exported {
        path: "/tmp/trace-x.json".into(),
    });
    assert_eq!(app.note.as_deref(), Some("exported to /tmp/trace-x.json"));
    // f follows the newest trace: a new poll moves the selection to it.
    press(&mut app, "jf");
    assert!(app.follow);
    assert_eq!(app.list.selected, 0);
    // r opens the selected trace in replay once it is read.
    press(&mut app, "j");
    let effects = press(&mut app, "r");
    let eggs_id = buy("b", "eggs", 5_000)[0].start.id.clone();
    assert_eq!(effects, [Effect::LoadTrace(eggs_id.clone())]);
    app.update(Action::TraceLoaded {
        trace_id: eggs_id,
        title: None,
        hops: buy("b", "eggs", 5_000),
    });
    assert_eq!(app.mode, Screen::Replay);
    app.update(key(KeyCode::Right));
    app.update(key(KeyCode::Right));
    app.update(key(KeyCode::Left));
    assert_eq!(app.view.as_ref().unwrap().replay.as_ref().unwrap().step, 1);
    // esc leaves the replay on the same message; q goes back to the list; q again quits.
    app.update(key(KeyCode::Esc));
    assert_eq!(
        (app.mode, app.view.as_ref().unwrap().selected),
        (Screen::Trace, 1)
    );
    app.update(key(KeyCode::Char('q')));
    assert_eq!(app.mode, Screen::List);
    assert_eq!(press(&mut app, "q"), [Effect::Quit]);
    assert!(app.quit);
}

#[test]
fn ctrl_c_leaves_from_anywhere() {
    let ctrl_c = Action::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    let mut app = loaded_app();
    open_milk(&mut app);
    press(&mut app, "r?");
    assert_eq!(app.mode, Screen::Help);
    assert_eq!(app.update(ctrl_c.clone()), [Effect::Quit]);
    let mut app = loaded_app();
    press(&mut app, "/ctrl");
    assert_eq!(app.update(ctrl_c), [Effect::Quit]);
    assert!(app.quit);
}

#[test]
fn replay_plays_at_the_recorded_pace_and_quits() {
    let hops = buy("a", "buy milk", 0);
    let trace = support::loaded(&hops[0].start.id.clone(), None, hops);
    let mut app = App::replay("x", trace, 2.0);
    app.update(Action::Tick { now_ns: 1_000 });
    press(&mut app, "p");
    let step = |app: &App| app.view.as_ref().unwrap().replay.as_ref().unwrap().step;
    // Message 2 came 10 ms after message 1: at twice the speed, 5 ms later.
    app.update(Action::Tick {
        now_ns: 1_000 + 4 * MS,
    });
    assert_eq!(step(&app), 0);
    app.update(Action::Tick {
        now_ns: 1_000 + 5 * MS,
    });
    assert_eq!(step(&app), 1);
    press(&mut app, "p");
    app.update(Action::Tick { now_ns: BASE });
    assert_eq!(step(&app), 1, "paused");
    press(&mut app, "G");
    assert_eq!(step(&app), 9);
    press(&mut app, "g");
    assert_eq!(step(&app), 0);
    assert_eq!(press(&mut app, "q"), [Effect::Quit]);
}

#[test]
fn polling_asks_for_in_flight_traces_again() {
    let mut app = loaded_app();
    let mut milk = buy("a", "buy milk", 0);
    milk[0].end.as_mut().unwrap().state = Some(HopState::InFlight);
    open_milk(&mut app);
    app.update(Action::TraceLoaded {
        trace_id: milk[0].start.id.clone(),
        title: None,
        hops: milk.clone(),
    });
    let effects = app.update(Action::Tick {
        now_ns: 10 * tracer::tui::app::POLL_NS,
    });
    assert!(
        effects.contains(&Effect::LoadTrace(milk[0].start.id.clone())),
        "{effects:?}"
    );
    assert!(matches!(effects[0], Effect::Poll { last: Some(_) }));
    // The request still waiting for its answer is drawn yellow.
    let terminal = draw(&mut app, 80, 24);
    assert_eq!(terminal.backend().buffer()[(2, 2)].fg, Color::Yellow);
    // f follows: a newer trace opens by itself.
    let newest = app.list.rows[0].id.clone();
    assert_eq!(press(&mut app, "f"), [Effect::LoadTrace(newest)]);
    assert!(app.follow);
    // No second poll while one is out.
    assert!(
        app.update(Action::Tick {
            now_ns: 20 * tracer::tui::app::POLL_NS
        })
        .is_empty()
    );
}

/// A streamed Ollama answer: the detail shows the chunks' arrival and Ollama's own timings
/// beside the observed ones.
#[test]
fn a_streamed_ollama_answer_shows_chunks_and_timings() {
    use tracer_wire::hop::{BodyCapture, Chunk};
    let records = [
        json!({"model": "qwen2.5:7b", "message": {"role": "assistant", "content": "I've"}, "done": false}),
        json!({"model": "qwen2.5:7b", "message": {"role": "assistant", "content": " added it."}, "done": false}),
        json!({"model": "qwen2.5:7b", "message": {"role": "assistant", "content": ""}, "done": true,
            "done_reason": "stop", "total_duration": 2_400_000_000u64, "load_duration": 1_900_000_000u64,
            "prompt_eval_count": 120, "prompt_eval_duration": 300_000_000u64,
            "eval_count": 12, "eval_duration": 150_000_000u64}),
    ];
    let ndjson: String = records.iter().map(|r| format!("{r}\n")).collect();
    let mut model = hop("s1", Role::Model, "/api/chat", 0, 2_500)
        .bodies(
            json!({"model": "qwen2.5:7b", "messages": [{"role": "user", "content": "Add it"}], "stream": true}),
            serde_json::Value::Null,
        )
        .done();
    let end = model.end.as_mut().unwrap();
    end.response_body = BodyCapture::whole(ndjson.into_bytes());
    end.response_headers = vec![tracer_wire::hop::Header::new(
        "content-type",
        "application/x-ndjson",
    )];
    end.response_head_unix_ns = Some(BASE + 2_000 * MS);
    end.response_first_byte_unix_ns = Some(BASE + 2_050 * MS);
    end.chunks = vec![
        Chunk {
            offset_ns: 2_050 * MS,
            size: 80,
        },
        Chunk {
            offset_ns: 2_300 * MS,
            size: 86,
        },
        Chunk {
            offset_ns: 2_500 * MS,
            size: 260,
        },
    ];
    let mut app = App::browser("tracer.db");
    app.update(Action::TraceLoaded {
        trace_id: model.start.id.clone(),
        title: Some("Add it".into()),
        hops: vec![model],
    });
    press(&mut app, "j");
    insta::assert_snapshot!("ollama_stream_80x40", draw(&mut app, 80, 40).backend());
}

#[test]
fn list_names_the_session_of_each_trace() {
    // Two runs of a host: the list says which run each trace is (the host's own id).
    let mut app = App::browser("tracer.db");
    app.start();
    let traces = traces();
    let rows: Vec<TraceRow> = traces.iter().map(|(row, _)| row.clone()).collect();
    let sessions = [
        (rows[0].id.clone(), "01a232f2-5168-70f2-a487-97e50765da2d"),
        (rows[1].id.clone(), "e4865556-21fa-42c0-807b-5403630c0d10"),
        (rows[2].id.clone(), "e4865556-21fa-42c0-807b-5403630c0d10"),
    ]
    .into_iter()
    .map(|(trace, label)| (trace, label.to_string()))
    .collect();
    app.update(Action::TracesLoaded {
        rows: rows.clone(),
        token: PollToken::default(),
        partial: false,
        sessions,
    });
    let facts = traces
        .iter()
        .map(|(row, hops)| (row.id.clone(), TraceFacts::of(hops)))
        .collect();
    app.update(Action::FactsLoaded(facts));
    assert_eq!(
        app.list.session_of(&rows[1].id),
        app.list.session_of(&rows[2].id)
    );
    assert_ne!(
        app.list.session_of(&rows[0].id),
        app.list.session_of(&rows[1].id)
    );
    // At 80 columns the title has its room (a SESSION column left it 14 characters); TOKENS
    // from 110, SESSION from 140.
    insta::assert_snapshot!("list_sessions_80x6", draw(&mut app, 80, 6).backend());
    let at_80 = format!("{:?}", draw(&mut app, 80, 6).backend());
    assert!(!at_80.contains("SESSION"), "{at_80}");
    assert!(at_80.contains("Add buy milk to my note"), "{at_80}");
    insta::assert_snapshot!("list_sessions_120x6", draw(&mut app, 120, 6).backend());
    let at_120 = format!("{:?}", draw(&mut app, 120, 6).backend());
    assert!(
        at_120.contains("TOKENS") && !at_120.contains("SESSION"),
        "{at_120}"
    );
    insta::assert_snapshot!("list_sessions_140x6", draw(&mut app, 140, 6).backend());
    let at_140 = format!("{:?}", draw(&mut app, 140, 6).backend());
    assert!(
        at_140.contains("SESSION") && at_140.contains("e4865556"),
        "{at_140}"
    );
    let narrow = format!("{:?}", draw(&mut app, 60, 6).backend());
    assert!(!narrow.contains("SESSION"), "{narrow}");
}
