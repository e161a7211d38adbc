//! The TUI over a trace read with its large request bodies let go of (as `Effect::LoadTrace`
//! reads it): the detail pane of such a request asks for its body (one read at a time), says it
//! is loading, and shows it once read back; the changes pane compares bodies read back; and the
//! effects read a body and a call's changes back from a real store, by hop id.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::text::Line;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tracer::tui::action::{Action, Effect};
use tracer::tui::app::App;
use tracer::tui::effects::Effects;
use tracer::tui::view;
use tracer_store::{Store, hops};
use tracer_trace::RecordedHop;
use tracer_trace::read::recorded_hop::{let_go_of_request_body, read_all};
use tracer_trace::read::request_changes::Change;

use crate::tokens::claude_code_hops;

fn press(app: &mut App, keys: &str) -> Vec<Effect> {
    let key = |c| Action::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    keys.chars().flat_map(|c| app.update(key(c))).collect()
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 80)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    format!("{}", terminal.backend())
}

/// Claude Code's two turns (78 KB requests) as the TUI reads them from a store: each hop read
/// once, then its request body let go of.
fn let_go_hops() -> Vec<RecordedHop> {
    let mut hops = claude_code_hops();
    read_all(&hops);
    for hop in &mut hops {
        let_go_of_request_body(hop);
        let body = &hop.end.as_ref().unwrap().request_body;
        assert!(body.bytes.is_empty() && body.total_len > 70_000);
    }
    hops
}

/// The lines the effect makes of a hop's request body.
fn body_lines(hop: &RecordedHop) -> Vec<Line<'static>> {
    view::body_part(
        &hop.start.request_headers,
        &hop.end.as_ref().unwrap().request_body,
    )
}

fn load(trace_id: &str, hop_id: &str, lines: Vec<Line<'static>>) -> Action {
    Action::BodyLoaded {
        trace_id: trace_id.into(),
        hop_id: hop_id.into(),
        lines,
    }
}

#[test]
fn the_detail_of_a_let_go_request_asks_for_its_body_and_shows_it_once_read() {
    let held = claude_code_hops();
    let hops = let_go_hops();
    let (cc1, cc2) = (hops[0].start.id.clone(), hops[1].start.id.clone());
    let trace_id = cc1.clone();
    let mut app = App::browser("tracer.db");
    // Opening the trace shows its first message, cc1's request: its body is asked for.
    let effects = app.update(Action::TraceLoaded {
        trace_id: trace_id.clone(),
        title: None,
        hops,
    });
    let asked = Effect::LoadBody {
        trace_id: trace_id.clone(),
        hop_id: cc1.clone(),
    };
    assert_eq!(effects, [asked]);
    let shown = screen(&mut app);
    assert!(
        shown.contains("loading the body from the database"),
        "{shown}"
    );
    assert!(shown.contains("body (78277 bytes)"), "{shown}");
    assert!(!shown.contains("\"claude-opus-4-8\""), "{shown}");
    // Asked once: a redraw or a key that keeps the selection asks nothing more.
    assert!(app.update(Action::Resize).is_empty());
    // One read at a time: moving to cc2's request while cc1's is read asks nothing yet...
    assert!(press(&mut app, "jj").is_empty());
    assert!(screen(&mut app).contains("loading the body from the database"));
    // ...and cc1's body, come too late, is dropped and cc2's is asked for.
    let effects = app.update(load(&trace_id, &cc1, body_lines(&held[0])));
    assert_eq!(
        effects,
        [Effect::LoadBody {
            trace_id: trace_id.clone(),
            hop_id: cc2.clone()
        }]
    );
    let fetched = &app.view.as_ref().unwrap().fetched;
    assert_eq!(fetched.body.as_ref().map(|(id, _)| id), Some(&cc2));
    assert!(fetched.body_of(&cc1).is_none());
    // Read back: drawn as a held body is, the loading line gone.
    assert!(
        app.update(load(&trace_id, &cc2, body_lines(&held[1])))
            .is_empty()
    );
    let shown = screen(&mut app);
    assert!(!shown.contains("loading the body"), "{shown}");
    assert!(shown.contains("\"model\": \"claude-opus-4-8\","), "{shown}");
    // A response holds its body: nothing is asked for it.
    assert!(press(&mut app, "j").is_empty());
}

#[test]
fn the_changes_of_let_go_requests_are_compared_from_bodies_read_back() {
    let hops = let_go_hops();
    let (cc1, cc2) = (hops[0].start.id.clone(), hops[1].start.id.clone());
    let trace_id = cc1.clone();
    let mut app = App::browser("tracer.db");
    app.update(Action::TraceLoaded {
        trace_id: trace_id.clone(),
        title: None,
        hops,
    });
    // `d` on cc2's request: its body and cc1's are compared off the loop.
    let effects = press(&mut app, "jjd");
    let asked = Effect::LoadChanges {
        trace_id: trace_id.clone(),
        hop_id: cc2.clone(),
        previous_hop_id: Some(cc1),
    };
    assert!(effects.contains(&asked), "{effects:?}");
    let shown = screen(&mut app);
    assert!(
        shown.contains("loading the two requests' bodies"),
        "{shown}"
    );
    assert!(!shown.contains("a body is not JSON"), "{shown}");
    app.update(Action::ChangesLoaded {
        trace_id,
        hop_id: cc2,
        changes: Some(vec![Change("messages 3-4 added".into())]),
        body_bytes: 78_893,
    });
    let shown = screen(&mut app);
    assert!(shown.contains("messages 3-4 added"), "{shown}");
    assert!(!shown.contains("loading"), "{shown}");
}

async fn next(actions: &mut UnboundedReceiver<Action>) -> Action {
    tokio::time::timeout(Duration::from_secs(20), actions.recv())
        .await
        .expect("an effect answers within 20 s")
        .expect("the channel is open")
}

#[tokio::test]
async fn the_effects_read_a_trace_without_its_large_bodies_and_read_them_back_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let held = claude_code_hops();
    let (cc1, cc2) = (held[0].start.id.clone(), held[1].start.id.clone());
    {
        let mut conn = store.pool().acquire().await.unwrap();
        for hop in &held {
            hops::insert_start(&mut conn, &hop.start).await.unwrap();
            assert!(
                hops::apply_end(&mut conn, hop.end.as_ref().unwrap())
                    .await
                    .unwrap()
            );
        }
    }
    let (sender, mut actions) = unbounded_channel();
    let effects = Effects::new(Some(store.clone()), dir.path().to_path_buf(), sender);
    effects.spawn(Effect::Poll { last: None });
    let Action::TracesLoaded { rows, .. } = next(&mut actions).await else {
        panic!("expected the list");
    };
    // The trace that holds cc1: read with its 78 KB request bodies let go of.
    let mut found = None;
    for row in &rows {
        effects.spawn(Effect::LoadTrace(row.id.clone()));
        let Action::TraceLoaded { trace_id, hops, .. } = next(&mut actions).await else {
            panic!("expected a trace");
        };
        if let Some(hop) = hops.iter().find(|h| h.start.id == cc1) {
            let body = &hop.end.as_ref().unwrap().request_body;
            assert!(body.bytes.is_empty(), "the body is let go of");
            assert_eq!(body.total_len, 78_277);
            found = Some(trace_id);
        }
    }
    let trace_id = found.expect("a trace holds cc1");
    effects.spawn(Effect::LoadBody {
        trace_id: trace_id.clone(),
        hop_id: cc1.clone(),
    });
    let Action::BodyLoaded { hop_id, lines, .. } = next(&mut actions).await else {
        panic!("expected the body");
    };
    assert_eq!(hop_id, cc1);
    assert_eq!(lines, body_lines(&held[0]));
    effects.spawn(Effect::LoadChanges {
        trace_id,
        hop_id: cc2.clone(),
        previous_hop_id: Some(cc1),
    });
    let Action::ChangesLoaded {
        hop_id,
        changes,
        body_bytes,
        ..
    } = next(&mut actions).await
    else {
        panic!("expected the changes");
    };
    assert_eq!(hop_id, cc2);
    let lines = changes.map(|c| c.into_iter().map(|c| c.0).collect::<Vec<_>>());
    assert_eq!(
        lines,
        Some(vec![
            "message 3 added: assistant, thinking + text + tool call mcp__notes__append: \"I'll add that to your notes.\"".to_string(),
            "message 4 added: user, tool result for mcp__notes__append (toolu_01Scripte…): \"Appended a new line at the end of the notes (now 1 line, 9…\"".to_string(),
        ])
    );
    assert!(body_bytes > 70_000, "{body_bytes}");
    store.close().await;
}
