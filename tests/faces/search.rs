//! `tracer search` over a database built from recorded hops: text only inside a gzip-encoded
//! (and chunked) body, only in a tool result, across two stored chunks, the `--json` shape, no
//! match; the TUI's `body:` through real effects; and `tracer mcp`'s `search`, the same traces.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};
use tracer_store::{Store, hops};
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Header, Role};

use crate::trace_hops::{buy, hop};

/// Words from a fixed pseudo-random walk: text that compresses badly and chunks into many parts.
fn prose(seed: u64, bytes: usize) -> String {
    const WORDS: [&str; 12] = [
        "parse", "stream", "index", "option", "cargo", "header", "field", "async", "error",
        "every", "after", "which",
    ];
    let mut state = seed;
    let mut out = String::new();
    while out.len() < bytes {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push_str(WORDS[(state >> 33) as usize % WORDS.len()]);
        out.push_str(&format!("{} ", (state >> 40) % 1000));
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// Buy milk whose tool result (only) says "Appended", then an Ollama call an hour later whose
/// answer is gzip-encoded, 30 KB of prose with "Zanzibar" in it, and whose request is 40 KB.
fn recorded() -> (Vec<RecordedHop>, Vec<RecordedHop>) {
    let mut milk = buy("a", "buy milk", 0);
    milk[3].end.as_mut().unwrap().response_body = BodyCapture::whole(
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Appended a new line to notes.txt"}], "isError": false}})
            .to_string()
            .into_bytes(),
    );
    let answer = json!({
        "model": "qwen2.5:7b",
        "message": {"role": "assistant", "content": format!("{} Zanzibar {}", prose(1, 15_000), prose(2, 15_000))},
        "done": true
    });
    let question = json!({
        "model": "qwen2.5:7b",
        "messages": [{"role": "user", "content": format!("Summarise this: {}", prose(3, 40_000))}],
        "stream": false
    });
    let mut model = hop("z1", Role::Model, "/api/chat", 3_600_000, 3_601_000)
        .bodies(question, Value::Null)
        .done();
    let end = model.end.as_mut().unwrap();
    end.response_headers = vec![
        Header::new("content-type", "application/json"),
        Header::new("content-encoding", "gzip"),
    ];
    end.response_body = BodyCapture::whole(gzip(answer.to_string().as_bytes()));
    assert!(end.response_body.bytes.len() > 4096, "stored as chunks");
    (milk, vec![model])
}

async fn seed(path: &Path) -> (String, String) {
    let (milk, model) = recorded();
    let store = Store::open(path).await.unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    for hop in milk.iter().chain(&model) {
        hops::insert_start(&mut conn, &hop.start).await.unwrap();
        assert!(
            hops::apply_end(&mut conn, hop.end.as_ref().unwrap())
                .await
                .unwrap()
        );
    }
    drop(conn);
    store.close().await;
    (milk[0].start.id.clone(), model[0].start.id.clone())
}

fn tracer(db: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

#[tokio::test]
async fn search_finds_a_gzip_bodys_text_and_a_tool_results_by_message_number() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (milk, model) = seed(&db).await;

    // Only in the tool result: the answer to `tools/call append`, message 7 of buy milk.
    let out = tracer(&db, &["search", "appended"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("\"appended\" occurs in 1 trace:"), "{text}");
    assert!(
        text.contains("\"Add buy milk to my notes\"  in message"),
        "{text}"
    );
    assert!(
        text.contains("     7 ←  …") && text.contains("Appended a new line to notes.txt"),
        "{text}"
    );

    // Only inside the gzip-encoded answer (message 2 of its trace): `--json`'s shape.
    let out = tracer(&db, &["search", "ZANZIBAR", "--json"]);
    assert!(out.status.success());
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["text"], "ZANZIBAR");
    assert_eq!(found["more"], 0);
    assert_eq!(found["ungrouped_hops"], 0);
    let traces = found["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 1, "{found}");
    assert_eq!(traces[0]["id"], model.as_str());
    assert_eq!(traces[0]["in_title"], false);
    assert!(traces[0]["started"].as_str().unwrap().ends_with('Z'));
    let messages = traces[0]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{found}");
    assert_eq!(messages[0]["number"], 2);
    assert_eq!(messages[0]["direction"], "response");
    assert!(
        messages[0]["excerpt"]
            .as_str()
            .unwrap()
            .contains("Zanzibar"),
        "{found}"
    );

    // A title, and words that are in no trace (exit 1, as grep).
    let out = tracer(&db, &["search", "buy MILK", "--json"]);
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["traces"][0]["id"], milk.as_str());
    assert_eq!(found["traces"][0]["in_title"], true);
    let out = tracer(&db, &["search", "no such words"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("occurs in no trace"));
}

#[tokio::test]
async fn a_text_across_two_stored_chunks_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (_, model) = seed(&db).await;
    // The request body (40 KB) as stored: where its first chunk ends.
    let store = Store::open(&db).await.unwrap();
    let first: Vec<u8> = sqlx::query_scalar(
        "select c.bytes from hop_body_chunks r join body_chunks c on c.id = r.chunk_id
          where r.hop_id = ?1 and r.side = 0 order by r.part, r.seq limit 1",
    )
    .bind(&model)
    .fetch_one(store.pool())
    .await
    .unwrap();
    let (body, _) = store.whole_bodies(&model, true, false).await.unwrap();
    assert!(first.len() < body.len(), "the body is more than one chunk");
    let across = String::from_utf8_lossy(&body[first.len() - 12..first.len() + 12]).to_string();
    assert!(!across.contains('"') && !across.contains('\\'), "{across}");
    let found = tracer_live::search::matching_hops(&store, &across.to_uppercase())
        .await
        .unwrap();
    assert!(
        found
            .iter()
            .any(|hit| hit.hop_id == model && hit.side == tracer_wire::hop::BodySide::Request),
        "{across:?}: {found:?}"
    );
    store.close().await;
}

#[tokio::test]
async fn tracer_mcp_search_answers_the_same_traces() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    seed(&db).await;
    for needle in ["appended", "zanzibar", "buy milk"] {
        // `tracer search` groups the hops first (the mcp server only reads).
        let out = tracer(&db, &["search", needle, "--json"]);
        let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search", "arguments": {"text": needle}}});
        let answers = crate::mcp_server::stdio_session(&db, &[initialize, call]);
        let mcp = &answers[1]["result"]["structuredContent"];
        let of_cli: Vec<(Value, Vec<Value>)> = cli["traces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let numbers = t["messages"].as_array().unwrap();
                (
                    t["id"].clone(),
                    numbers.iter().map(|m| m["number"].clone()).collect(),
                )
            })
            .collect();
        let of_mcp: Vec<(Value, Vec<Value>)> = mcp["traces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["trace"].clone(),
                    t["messages"].as_array().unwrap().clone(),
                )
            })
            .collect();
        assert!(!of_cli.is_empty(), "{needle}");
        assert_eq!(of_cli, of_mcp, "{needle}: {cli} / {mcp}");
    }
}

#[tokio::test]
async fn the_tui_body_filter_finds_appended_in_buy_milk() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use tracer::tui::action::{Action, Effect};
    use tracer::tui::app::App;
    use tracer::tui::effects::Effects;

    let dir = tempfile::tempdir().unwrap();
    let db = crate::sample_db::sample_db(dir.path());
    let store = Store::open_existing(&db).await.unwrap();
    let (sender, mut actions) = tokio::sync::mpsc::unbounded_channel();
    let effects = Effects::new(Some(store.clone()), dir.path().to_path_buf(), sender);
    let mut next = async || {
        tokio::time::timeout(std::time::Duration::from_secs(20), actions.recv())
            .await
            .unwrap()
            .unwrap()
    };
    let mut app = App::browser("tracer.db");
    for effect in app.start() {
        effects.spawn(effect);
    }
    let loaded = next().await;
    assert!(matches!(loaded, Action::TracesLoaded { .. }));
    app.update(loaded);
    let all = app.list.shown.len();
    let key = |code| Action::Key(KeyEvent::new(code, KeyModifiers::NONE));
    app.update(key(KeyCode::Char('/')));
    for c in "body:Appended".chars() {
        app.update(key(KeyCode::Char(c)));
    }
    let wanted: Vec<Effect> = app.update(key(KeyCode::Enter));
    let search = wanted
        .into_iter()
        .find(|e| matches!(e, Effect::Search(_)))
        .expect("enter runs the body search");
    assert_eq!(search, Effect::Search("Appended".into()));
    effects.spawn(search);
    let done = loop {
        match next().await {
            done @ Action::SearchDone { .. } => break done,
            _ => continue,
        }
    };
    app.update(done);
    let shown: Vec<&str> = app
        .list
        .shown
        .iter()
        .map(|&i| app.list.rows[i].id.as_str())
        .collect();
    assert!(shown.contains(&crate::sample_db::BUY_MILK), "{shown:?}");
    assert!(shown.len() < all, "{shown:?} of {all}");
    // Titles alone do not hold it: the plain filter finds nothing.
    app.update(key(KeyCode::Char('/')));
    let ctrl_u = Action::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    app.update(ctrl_u);
    assert_eq!(app.filter_input, "");
    for c in "Appended".chars() {
        app.update(key(KeyCode::Char(c)));
    }
    assert!(app.list.shown.is_empty());
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 12)).unwrap();
    terminal
        .draw(|frame| tracer::tui::view::render(&mut app, frame))
        .unwrap();
    let screen = format!("{:?}", terminal.backend());
    assert!(
        screen.contains("/body:Appended searches the messages and bodies too"),
        "{screen}"
    );
    store.close().await;
}
