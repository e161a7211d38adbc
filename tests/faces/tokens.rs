//! Claude Code's turn (input 4,957 + cache write 17,758 + cache read 16,901, output 133: a
//! 39,616-token prompt) and a cached final answer, through every face: `show`, `show --json`
//! (the hop log's `tokens`), `ls`, the Markdown and HTML handouts, OTLP, `diff` and the TUI.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::view;
use tracer_export::hop_log::HopLog;
use tracer_store::traces::TraceRow;
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Header};

use crate::trace_hops::hop;

pub(crate) const CALL_REQUEST: &[u8] =
    include_bytes!("../fixtures/agents/claude-code/turn1_request.json");
pub(crate) const CALL_STREAM: &[u8] =
    include_bytes!("../fixtures/agents/claude-code/turn1_response.sse");
pub(crate) const ANSWER_REQUEST: &[u8] =
    include_bytes!("../fixtures/agents/claude-code/turn2_request.json");
pub(crate) const ANSWER_STREAM: &[u8] =
    include_bytes!("../fixtures/agents/claude-code/turn2_response.sse");

/// What every face shows for the tool-call turn.
const TURN: &str = "39,616 in (16,901 cache read, 12,758 cache write for 5 minutes, 5,000 for 1 hour, 4,957 new) · 133 out";
/// And for the final answer.
const ANSWER: &str =
    "35,391 in (34,659 cache read, 420 cache write for 5 minutes, 312 new) · 41 out";
/// The trace's sum.
const TOTAL: &str = "75,007 in · 174 out";

pub(crate) fn model_hop(
    id: &str,
    start_ms: i64,
    end_ms: i64,
    request: &[u8],
    body: &[u8],
) -> RecordedHop {
    let mut hop = hop(
        id,
        tracer_wire::hop::Role::Model,
        "/v1/messages",
        start_ms,
        end_ms,
    )
    .done();
    let end = hop.end.as_mut().unwrap();
    end.request_body = BodyCapture::whole(request.to_vec());
    end.response_body = BodyCapture::whole(body.to_vec());
    end.response_headers = vec![Header::new("content-type", "text/event-stream")];
    hop
}

/// Claude Code's two recorded turns: the tool call, then the final answer.
pub(crate) fn claude_code_hops() -> Vec<RecordedHop> {
    vec![
        model_hop("cc1", 0, 2_000, CALL_REQUEST, CALL_STREAM),
        model_hop("cc2", 2_100, 3_000, ANSWER_REQUEST, ANSWER_STREAM),
    ]
}

/// The trace as a hop-log file, and its id.
fn hop_log_file(dir: &Path, name: &str) -> (PathBuf, String) {
    let hops = claude_code_hops();
    let row = TraceRow {
        id: hops[0].start.id.clone(),
        title: Some("Add buy milk to my notes".into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: hops[1].end.as_ref().and_then(|e| e.response_ended_unix_ns),
        created_by: "correlate".into(),
    };
    let log = HopLog::from_recorded(row.clone(), &hops);
    let path = dir.join(name);
    std::fs::write(&path, log.to_json_pretty()).unwrap();
    (path, row.id)
}

pub(crate) fn tracer(db: &Path, args: &[&str]) -> String {
    let output = cargo_bin_cmd!("tracer")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "tracer {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn int_attribute(span: &Value, key: &str) -> Option<i64> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)?["value"]["intValue"]
        .as_str()?
        .parse()
        .ok()
}

#[test]
fn show_ls_exports_and_diff_count_every_bucket() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let (file, id) = hop_log_file(dir.path(), "claude-code.json");
    let file = file.to_str().unwrap();
    tracer(&db, &["import", file]);

    let shown = tracer(&db, &["show", &id]);
    assert!(shown.contains(&format!("tokens: {TURN}\n")), "{shown}");
    assert!(shown.contains(&format!("tokens: {ANSWER}\n")), "{shown}");
    assert!(
        shown
            .lines()
            .nth(1)
            .unwrap()
            .contains(&format!("tokens: {TOTAL}")),
        "{shown}"
    );

    let log: Value = serde_json::from_str(&tracer(&db, &["show", &id, "--json"])).unwrap();
    assert_eq!(log["version"], 4);
    let total = &log["trace"]["tokens"];
    assert_eq!(total["prompt"], 75007);
    assert_eq!(total["cache_read"], 51560);
    assert_eq!(total["cache_write"], 18178);
    assert_eq!(total["cache_write_1h"], 5000);
    assert_eq!(total["output"], 174);
    let answers: Vec<&Value> = log["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["direction"] == "←")
        .collect();
    let turn = &answers[0]["tokens"];
    assert_eq!(turn["prompt"], 39616);
    assert_eq!(turn["cache_read"], 16901);
    assert_eq!(turn["cache_write"], 17758);
    assert_eq!(turn["cache_write_5m"], 12758);
    assert_eq!(turn["cache_write_1h"], 5000);
    assert_eq!(turn["output"], 133);
    assert!(turn.get("reasoning").is_none(), "not reported, not written");
    let requests = log["messages"].as_array().unwrap().iter();
    assert!(
        requests
            .filter(|m| m["direction"] == "→")
            .all(|m| m.get("tokens").is_none())
    );

    let listed = tracer(&db, &["ls"]);
    assert!(
        listed.lines().next().unwrap().contains("TOKENS"),
        "{listed}"
    );
    assert!(listed.contains(TOTAL), "{listed}");
    let listed: Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    assert_eq!(listed[0]["tokens"]["prompt"], 75007);

    let md = tracer(&db, &["export", &id, "--format", "md"]);
    assert!(md.contains(&format!(", tokens: {TOTAL}, cost: ")), "{md}");
    assert!(md.contains(&format!("\n\nTokens: {TURN}\n\n")), "{md}");
    let html = tracer(&db, &["export", &id, "--format", "html"]);
    assert!(
        html.contains(&format!(" · tokens: {TOTAL} · cost: ")),
        "the meta line"
    );
    assert!(
        html.contains(&format!("<li class=\"tokens\">tokens: {TURN}</li>")),
        "the answer's timing list"
    );

    let otlp: Value =
        serde_json::from_str(&tracer(&db, &["export", &id, "--format", "otlp"])).unwrap();
    let spans = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    let turn = spans
        .iter()
        .find(|s| int_attribute(s, "gen_ai.usage.output_tokens") == Some(133))
        .expect("the turn's span");
    // The convention: cache reads and writes are inside gen_ai.usage.input_tokens.
    assert_eq!(
        int_attribute(turn, "gen_ai.usage.input_tokens"),
        Some(39616)
    );
    assert_eq!(
        int_attribute(turn, "gen_ai.usage.cache_read.input_tokens"),
        Some(16901)
    );
    assert_eq!(
        int_attribute(turn, "gen_ai.usage.cache_creation.input_tokens"),
        Some(17758)
    );
    assert_eq!(int_attribute(turn, "llm.token_count.prompt"), Some(39616));

    let (other, _) = hop_log_file(dir.path(), "again.json");
    let diff = tracer(&db, &["diff", file, other.to_str().unwrap()]);
    assert!(diff.contains(&format!("tokens: {TURN}, cost: ")), "{diff}");
    assert!(
        diff.contains(
            "tokens: 75,007 in (51,560 cache read, 13,178 cache write for 5 minutes, 5,000 for 1 hour, 5,269 new) · 174 out"
        ),
        "{diff}"
    );
    assert!(!diff.contains("4957 in"), "{diff}");
}

#[test]
fn the_tui_detail_shows_the_answers_tokens() {
    let hops = claude_code_hops();
    let mut app = App::browser("tracer.db");
    app.update(Action::TraceLoaded {
        trace_id: hops[0].start.id.clone(),
        title: Some("Add buy milk to my notes".into()),
        hops,
    });
    app.update(Action::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('j'),
        crossterm::event::KeyModifiers::NONE,
    )));
    let mut terminal = Terminal::new(TestBackend::new(120, 24)).unwrap();
    terminal
        .draw(|frame| view::render(&mut app, frame))
        .unwrap();
    let screen = format!("{}", terminal.backend());
    assert!(screen.contains(&format!("tokens:   {TURN}")), "{screen}");
    insta::assert_snapshot!("claude_code_turn_120x24", terminal.backend());
}

#[test]
fn the_tui_list_has_a_tokens_column_as_ls_shows_them() {
    let hops = claude_code_hops();
    let row = TraceRow {
        id: hops[0].start.id.clone(),
        title: Some("Add buy milk to my notes".into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: hops[1].end.as_ref().and_then(|e| e.response_ended_unix_ns),
        created_by: "correlate".into(),
    };
    let mut app = App::browser("tracer.db");
    app.start();
    app.update(Action::TracesLoaded {
        rows: vec![row.clone()],
        token: Default::default(),
        partial: false,
        sessions: Default::default(),
    });
    app.update(Action::FactsLoaded(vec![(
        row.id.clone(),
        tracer::tui::facts::TraceFacts::of(&hops),
    )]));
    let draw = |app: &mut App, width: u16| {
        let mut terminal = Terminal::new(TestBackend::new(width, 4)).unwrap();
        terminal.draw(|frame| view::render(app, frame)).unwrap();
        terminal
    };
    let wide = draw(&mut app, 120);
    assert!(
        format!("{}", wide.backend()).contains(TOTAL),
        "{}",
        wide.backend()
    );
    insta::assert_snapshot!("claude_code_list_120x4", wide.backend());
    // At 80 columns the title keeps the room: no TOKENS column.
    assert!(!format!("{}", draw(&mut app, 80).backend()).contains("TOKENS"));
}

#[test]
fn a_version_1_hop_log_still_reads_and_is_written_again_with_its_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = hop_log_file(dir.path(), "v2.json");
    let mut old: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    old["version"] = 1.into();
    for key in ["tokens", "cost", "last_prompt"] {
        old["trace"].as_object_mut().unwrap().remove(key);
    }
    for message in old["messages"].as_array_mut().unwrap() {
        message.as_object_mut().unwrap().remove("tokens");
        message.as_object_mut().unwrap().remove("cost");
    }
    let old = serde_json::to_vec_pretty(&old).unwrap();
    assert!(HopLog::from_json(&old).is_ok(), "version 1 is read");
    let again = HopLog::from_file(&old).unwrap();
    assert_eq!(
        again.to_json_pretty(),
        std::fs::read_to_string(&file).unwrap()
    );
    let mut future: Value = serde_json::from_slice(&old).unwrap();
    future["version"] = 7.into();
    let refused = HopLog::from_json(&serde_json::to_vec(&future).unwrap()).unwrap_err();
    assert!(
        refused.to_string().contains("reads versions 1 to 6"),
        "{refused}"
    );
}
