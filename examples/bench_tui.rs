//! Benchmark of the trace browser on a big database: builds 100k hops (20k buy-milk traces) in a
//! temp dir, then reports the time to the first frame (list rows, then their facts) and the cost
//! of one scroll step (update + draw) at the top and at the bottom of the list.
//!
//! `cargo run --example bench_tui [--release] [-- HOPS [DB_PATH]]`

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::effects::Effects;
use tracer::tui::view;
use tracer_store::traces::TraceRow;
use tracer_store::{Store, hops};
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

const MS: i64 = 1_000_000;
const BASE: i64 = 1_800_000_000_000_000_000;

fn hop(
    id: String,
    role: Role,
    path: &str,
    at_ms: i64,
    took_ms: i64,
    request: serde_json::Value,
    response: serde_json::Value,
) -> (HopStart, HopEnd) {
    let start = HopStart {
        id: id.clone(),
        route: role.as_str().into(),
        role,
        transport: Transport::Http,
        peer: "127.0.0.1:40000".into(),
        method: "POST".into(),
        path: path.into(),
        url: format!("http://127.0.0.1:9{path}"),
        request_headers: vec![Header::new("content-type", "application/json")],
        started_unix_ns: BASE + at_ms * MS,
        run_id: None,
    };
    let end = HopEnd {
        id,
        state: Some(HopState::Complete),
        status: Some(200),
        response_headers: vec![Header::new("content-type", "application/json")],
        request_body: BodyCapture::whole(request.to_string().into_bytes()),
        response_body: BodyCapture::whole(response.to_string().into_bytes()),
        response_ended_unix_ns: Some(BASE + (at_ms + took_ms) * MS),
        ..HopEnd::default()
    };
    (start, end)
}

/// One buy-milk trace of five hops, starting at `t` ms.
fn trace(n: usize, t: i64) -> Vec<(HopStart, HopEnd)> {
    let id = |k: usize| format!("{n:027x}{k:05x}");
    let text = format!("Add item {n} to my notes");
    let user = json!({"role": "user", "content": text});
    let call = json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "append", "arguments": {"content": n.to_string()}}}]});
    vec![
        hop(
            id(1),
            Role::Agent,
            "/agent",
            t,
            1000,
            json!({"message": text}),
            json!({"reply": "Done."}),
        ),
        hop(
            id(2),
            Role::Mcp,
            "/mcp",
            t + 10,
            10,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "append"}]}}),
        ),
        hop(
            id(3),
            Role::Model,
            "/api/chat",
            t + 30,
            470,
            json!({"model": "qwen2.5:7b", "messages": [user], "stream": false}),
            json!({"message": call, "done": true}),
        ),
        hop(
            id(4),
            Role::Mcp,
            "/mcp",
            t + 510,
            10,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "append", "arguments": {"content": n.to_string()}}}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Success"}]}}),
        ),
        hop(
            id(5),
            Role::Model,
            "/api/chat",
            t + 530,
            370,
            json!({"model": "qwen2.5:7b", "messages": [user, call], "stream": false}),
            json!({"message": {"role": "assistant", "content": "Done."}, "done": true}),
        ),
    ]
}

async fn build(store: &Store, hop_count: usize) -> anyhow::Result<()> {
    let traces = hop_count / 5;
    let mut writes = Vec::with_capacity(traces);
    let mut assignments = Vec::with_capacity(hop_count);
    let mut tx = store.pool().begin().await?;
    for n in 0..traces {
        let t = i64::try_from(n)? * 2000;
        let hops = trace(n, t);
        let trace_id = hops[0].0.id.clone();
        for (start, end) in &hops {
            hops::insert_start(&mut tx, start).await?;
            hops::apply_end(&mut tx, end).await?;
            assignments.push((start.id.clone(), trace_id.clone()));
        }
        writes.push(TraceRow {
            id: trace_id,
            title: Some(format!("Add item {n} to my notes")),
            kind: "request".into(),
            started_unix_ns: BASE + t * MS,
            ended_unix_ns: Some(BASE + (t + 1000) * MS),
            created_by: "correlate".into(),
        });
    }
    tx.commit().await?;
    store.write_grouping(&writes, &assignments).await?;
    Ok(())
}

fn key(code: KeyCode) -> Action {
    Action::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Average cost of `steps` presses of `code` (update and draw).
fn scroll(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    effects: &Effects,
    code: KeyCode,
    steps: u32,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    for _ in 0..steps {
        for effect in app.update(key(code)) {
            effects.spawn(effect);
        }
        terminal.draw(|frame| view::render(app, frame))?;
    }
    Ok(started.elapsed() / steps)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let hop_count: usize = std::env::args().nth(1).map_or(Ok(100_000), |n| n.parse())?;
    let dir = tempfile::tempdir()?;
    // A second argument keeps the database there (to look at it with `tracer tui`).
    let path = std::env::args()
        .nth(2)
        .map_or_else(|| dir.path().join("bench.db"), std::path::PathBuf::from);
    let built = Instant::now();
    {
        let store = Store::open(&path).await?;
        build(&store, hop_count).await?;
        store.close().await;
    }
    println!("built {hop_count} hops in {:.1?}", built.elapsed());

    // Time to first frame: open, poll, draw the list; then again once the facts are in.
    let started = Instant::now();
    let store = Store::open(&path).await?;
    let opened = started.elapsed();
    let (sender, mut actions) = unbounded_channel();
    let effects = Effects::new(Some(store.clone()), dir.path().to_path_buf(), sender);
    let mut app = App::browser(path.display().to_string());
    let mut terminal = Terminal::new(TestBackend::new(80, 24))?;
    for effect in app.start() {
        effects.spawn(effect);
    }
    let mut rows_frame = None;
    let mut facts_frame = None;
    let mut whole_list = None;
    while facts_frame.is_none() || whole_list.is_none() {
        let Some(action) = actions.recv().await else {
            break;
        };
        let facts = matches!(action, Action::FactsLoaded(_));
        let whole = matches!(action, Action::TracesLoaded { partial: false, .. });
        for effect in app.update(action) {
            effects.spawn(effect);
        }
        terminal.draw(|frame| view::render(&mut app, frame))?;
        if rows_frame.is_none() && !app.list.rows.is_empty() {
            rows_frame = Some(started.elapsed());
        }
        if facts && facts_frame.is_none() {
            facts_frame = Some(started.elapsed());
        }
        if whole {
            whole_list = Some(started.elapsed());
        }
    }
    println!("{} traces", app.list.rows.len());
    println!(
        "whole list read after:      {:.1?}",
        whole_list.unwrap_or_default()
    );
    println!("database opened in:         {opened:.1?}");
    println!(
        "first frame with the list:  {:.1?}",
        rows_frame.unwrap_or_default()
    );
    println!(
        "first frame with its facts: {:.1?}",
        facts_frame.unwrap_or_default()
    );

    let top = scroll(&mut app, &mut terminal, &effects, KeyCode::Char('j'), 200)?;
    app.update(key(KeyCode::Char('G')));
    let bottom = scroll(&mut app, &mut terminal, &effects, KeyCode::Char('k'), 200)?;
    println!("scroll step at the top:    {top:.1?}");
    println!("scroll step at the bottom: {bottom:.1?}");
    store.close().await;
    Ok(())
}
