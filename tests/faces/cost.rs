//! Claude Code's two recorded turns (tests/fixtures/agents/claude-code/) priced through every
//! face: `show`, the hop log, `ls`, `ls --sessions`-free `ls --json`, md, html, OTLP, `diff`,
//! the TUI, and `--prices` overriding the built-in table. Claude Code's own `total_cost_usd` for
//! these calls was 0.1888 (tests/fixtures/agents/README.md).

use std::path::{Path, PathBuf};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::view;
use tracer_export::hop_log::HopLog;
use tracer_store::traces::TraceRow;
use tracer_trace::RecordedHop;

pub(crate) use crate::tokens::tracer;
use crate::tokens::{ANSWER_REQUEST, ANSWER_STREAM, CALL_REQUEST, CALL_STREAM, model_hop};

/// claude-opus-4-8 at LiteLLM's list prices ($5 in, $25 out, $0.50 cache read, $6.25 cache write
/// for 5 minutes, $10 for 1 hour, per million): the tool-call turn, 4,957 in + 12,758 + 5,000
/// written + 16,901 read + 133 out.
const TURN_USD: f64 = 0.024785 + 0.0797375 + 0.05 + 0.0084505 + 0.003325;
/// The final answer: 312 in + 420 written for 5 minutes + 34,659 read + 41 out.
const ANSWER_USD: f64 = 0.00156 + 0.002625 + 0.0173295 + 0.001025;
const LABEL: &str = "estimate at list prices, LiteLLM table as of 2026-12-01";

pub(crate) use crate::tokens::claude_code_hops;

pub(crate) fn hop_log_file(dir: &Path, name: &str, hops: &[RecordedHop]) -> (PathBuf, String) {
    let row = TraceRow {
        id: hops[0].start.id.clone(),
        title: Some("Add buy milk to my notes".into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: hops
            .last()
            .and_then(|h| h.end.as_ref()?.response_ended_unix_ns),
        created_by: "correlate".into(),
    };
    let log = HopLog::from_recorded(row.clone(), hops);
    let path = dir.join(name);
    std::fs::write(&path, log.to_json_pretty()).unwrap();
    (path, row.id)
}

fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-9)
}

#[test]
fn claude_codes_turns_are_priced_in_every_face_and_agree_with_its_own_cost() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let (file, id) = hop_log_file(dir.path(), "claude-code.json", &claude_code_hops());
    let file = file.to_str().unwrap();
    tracer(&db, &["import", file]);

    let log: Value = serde_json::from_str(&tracer(&db, &["show", &id, "--json"])).unwrap();
    let total = &log["trace"]["cost"];
    assert!(close(&total["usd"], TURN_USD + ANSWER_USD), "{total}");
    assert_eq!(total["calls"], 2);
    assert_eq!(total["unpriced_calls"], 0);
    assert_eq!(total["prices"], LABEL);
    assert_eq!(log["trace"]["last_prompt"], 35391);
    // Claude Code said total_cost_usd 0.1888 for the same two calls.
    let ours = total["usd"].as_f64().unwrap();
    assert!((ours - 0.1888).abs() / 0.1888 < 0.02, "{ours}");
    let answers: Vec<&Value> = log["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["direction"] == "←")
        .collect();
    assert!(close(&answers[0]["cost"]["usd"], TURN_USD));
    assert_eq!(answers[0]["cost"]["priced_as"], "claude-opus-4-8");
    assert!(close(&answers[1]["cost"]["usd"], ANSWER_USD));
    // The requests carry what their context is made of; the parts add up to the body.
    let request = log["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["direction"] == "→")
        .unwrap();
    let context = &request["context"];
    assert_eq!(context["bytes"], CALL_REQUEST.len());
    assert_eq!(context["prompt_tokens"], 39_616);
    let parts = context["parts"].as_array().unwrap();
    let bytes: u64 = parts.iter().map(|p| p["bytes"].as_u64().unwrap()).sum();
    assert_eq!(bytes, CALL_REQUEST.len() as u64);
    assert!(parts.iter().any(|p| p["part"] == "tools: notes (mcp, 5)"));

    let shown = tracer(&db, &["show", &id]);
    if let Ok(path) = std::env::var("TRACER_COST_SHOW_TO") {
        std::fs::write(path, &shown).unwrap();
    }
    assert!(
        shown.contains(&format!(
            "  billed across 2 calls: 75,007 in · 174 out, ≈ $0.1888 ({LABEL}) · context at the \
             last call: 35,391 tokens\n"
        )),
        "{shown}"
    );
    assert!(
        shown.contains("cost: ≈ $0.1663 (claude-opus-4-8 at list prices)\n"),
        "{shown}"
    );
    assert!(shown.contains("cost: ≈ $0.0225 (claude-opus-4-8 at list prices)\n"));
    // And the prompt cache under each answer: the second call read all the first left cached.
    assert!(
        shown.contains("cost: ≈ $0.1663 (claude-opus-4-8 at list prices)\n       cache: hit · read 16,901, wrote 17,758, 4,957 uncached\n"),
        "{shown}"
    );
    assert!(shown.contains("cache: hit · read 34,659, wrote 420, 312 uncached\n"));
    // What each request is made of, with its ≈ share of the reported input.
    assert!(
        shown.contains("context, 78.3 KB in 39,616 tokens (≈ shares by bytes, calibrated by this call's usage):\n"),
        "{shown}"
    );
    assert!(shown.contains("  system message 1 "), "{shown}");
    assert!(shown.contains("  history: tool results "), "{shown}");
    assert!(
        shown.contains("  of the history, new: 2 messages "),
        "{shown}"
    );

    // `--changes`: the second request adds the answer and the tool's result, nothing else, each
    // named by its role, kind and first words.
    let changes = tracer(&db, &["show", &id, "--changes"]);
    assert!(
        changes.contains("request 1: the first of its conversation (78.3 KB)\n"),
        "{changes}"
    );
    assert!(
        changes.contains(concat!(
            "request 3 against request 1:\n",
            "  message 3 added: assistant, thinking + text + tool call mcp__notes__append: \"I'll add that to your notes.\"\n",
            "  message 4 added: user, tool result for mcp__notes__append (toolu_01Scripte…): \"Appended a new line at the end of the notes (now 1 line, 9…\"\n"
        )),
        "{changes}"
    );

    let listed = tracer(&db, &["ls"]);
    assert!(listed.lines().next().unwrap().contains("COST"), "{listed}");
    assert!(listed.contains("≈ $0.1888"), "{listed}");

    let md = tracer(&db, &["export", &id, "--format", "md"]);
    assert!(
        md.contains(&format!(
            ", cost: ≈ $0.1888 billed across 2 calls ({LABEL})."
        )),
        "{md}"
    );
    assert!(md.contains("\n\nCost: ≈ $0.1663 (claude-opus-4-8 at list prices)\n\n"));
    let html = tracer(&db, &["export", &id, "--format", "html"]);
    assert!(html.contains(&format!(
        " · cost: ≈ $0.1888 billed across 2 calls ({LABEL})</p>"
    )));
    assert!(
        html.contains("<li class=\"cost\">cost: ≈ $0.1663 (claude-opus-4-8 at list prices)</li>")
    );

    let otlp: Value =
        serde_json::from_str(&tracer(&db, &["export", &id, "--format", "otlp"])).unwrap();
    let spans = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    let costs: Vec<f64> = spans
        .iter()
        .filter_map(|s| {
            s["attributes"]
                .as_array()?
                .iter()
                .find(|a| a["key"] == "tracer.cost.usd")?["value"]["doubleValue"]
                .as_f64()
        })
        .collect();
    assert_eq!(costs.len(), 2, "{costs:?}");
    assert!((costs.iter().sum::<f64>() - (TURN_USD + ANSWER_USD)).abs() < 1e-9);

    let (other, _) = hop_log_file(dir.path(), "again.json", &claude_code_hops());
    let diff = tracer(&db, &["diff", file, other.to_str().unwrap()]);
    assert!(
        diff.contains("cost: ≈ $0.1663 (claude-opus-4-8 at list prices)"),
        "{diff}"
    );
    assert!(
        diff.contains(&format!("cost: ≈ $0.1888 billed across 2 calls ({LABEL})")),
        "{diff}"
    );
}

#[test]
fn an_unknown_model_is_unknown_the_sum_at_least_and_prices_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    // The final turn asks for a model no table knows.
    let renamed = String::from_utf8(ANSWER_REQUEST.to_vec()).unwrap().replace(
        "\"model\":\"claude-opus-4-8\"",
        "\"model\":\"claude-scripted-9\"",
    );
    let stream = String::from_utf8(ANSWER_STREAM.to_vec()).unwrap().replace(
        "\"model\":\"claude-opus-4-8\"",
        "\"model\":\"claude-scripted-9\"",
    );
    let hops = vec![
        model_hop("cc1", 0, 2_000, CALL_REQUEST, CALL_STREAM),
        model_hop("cc2", 2_100, 3_000, renamed.as_bytes(), stream.as_bytes()),
    ];
    let (file, id) = hop_log_file(dir.path(), "unknown.json", &hops);
    tracer(&db, &["import", file.to_str().unwrap()]);

    let shown = tracer(&db, &["show", &id]);
    assert!(
        shown.contains("cost: unknown (claude-scripted-9 is not in the price table)\n"),
        "{shown}"
    );
    assert!(
        shown
            .contains("at least $0.1663 (1 unpriced: claude-scripted-9 is not in the price table)"),
        "{shown}"
    );
    assert!(!shown.contains("$0.0000"), "{shown}");
    assert!(tracer(&db, &["ls"]).contains("≥ $0.1663"));

    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"claude-scripted-9": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-5,
            "cache_read_input_token_cost": 1e-7, "cache_creation_input_token_cost": 2e-6}}"#,
    )
    .unwrap();
    let prices = prices.to_str().unwrap();
    let shown = tracer(&db, &["--prices", prices, "show", &id]);
    // 312×$1/M + 420×$2/M + 34,659×$0.10/M + 41×$10/M = $0.0050279
    assert!(
        shown.contains("cost: ≈ $0.0050 (claude-scripted-9 at list prices)"),
        "{shown}"
    );
    assert!(
        shown.contains(
            "≈ $0.1713 (estimate at list prices, LiteLLM table as of 2026-12-01 + prices.json)"
        ),
        "{shown}"
    );
}

#[test]
fn the_tui_detail_shows_the_calls_cost() {
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
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    terminal
        .draw(|frame| view::render(&mut app, frame))
        .unwrap();
    let screen = format!("{}", terminal.backend());
    assert!(
        screen.contains("cost:     ≈ $0.1663 (claude-opus-4-8 at list prices)"),
        "{screen}"
    );
    assert!(
        screen.contains("cache: hit · read 16,901, wrote 17,758, 4,957 uncached"),
        "{screen}"
    );
}

#[test]
fn tool_stats_weighs_each_tool_definition_in_tokens_and_dollars() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let (file, _) = hop_log_file(dir.path(), "claude.json", &claude_code_hops());
    tracer(&db, &["import", file.to_str().unwrap()]);
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}});
    // The recorded turns are dated 1970 (the test's clock): look back far enough.
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "tool_stats", "arguments": {"since": "-100000d"}}});
    let listed: Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    let trace = listed[0]["id"].as_str().unwrap().to_string();
    let message = |id: u64, number: u64| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "get_message", "arguments": {"trace": trace, "number": number}}})
    };
    let answers =
        crate::mcp_server::stdio_session(&db, &[initialize, call, message(2, 1), message(3, 2)]);
    // get_message: the request with what its context is made of, the answer with its cost and
    // what the prompt cache did.
    let request = &answers[2]["result"];
    let context = &request["structuredContent"]["context"];
    assert_eq!(context["prompt_tokens"], 39_616, "{request}");
    let parts = context["parts"].as_array().unwrap();
    assert!(
        parts.iter().any(|p| p["part"] == "tools: notes (mcp, 5)"),
        "{parts:?}"
    );
    let shared: u64 = parts
        .iter()
        .filter_map(|p| p["approx_tokens"].as_u64())
        .sum();
    assert!(shared.abs_diff(39_616) <= parts.len() as u64, "{shared}");
    assert!(
        request["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("context, "),
        "{request}"
    );
    let answer = &answers[3]["result"]["structuredContent"];
    assert!(close(&answer["cost"]["usd"], TURN_USD), "{answer}");
    assert_eq!(answer["cache"]["read"], 16_901, "{answer}");
    assert_eq!(answer["cache"]["written"], 17_758, "{answer}");
    let result = &answers[1]["result"];
    let text = result["content"][0]["text"].as_str().unwrap();
    let stats = &result["structuredContent"];
    let servers = stats["servers"].as_array().unwrap();
    // Claude Code's 29 tools: its own 24, and the notes server's 5 (named mcp__notes__*).
    let host = servers.iter().find(|s| s["server"].is_null()).unwrap();
    let notes = servers.iter().find(|s| s["server"] == "notes").unwrap();
    assert_eq!(host["tools"], 24, "{stats}");
    assert_eq!(notes["tools"], 5, "{stats}");
    assert_eq!(notes["context"]["requests"], 2);
    let (host_usd, notes_usd) = (
        host["context"]["approx_usd"].as_f64().unwrap(),
        notes["context"]["approx_usd"].as_f64().unwrap(),
    );
    // Their shares are of the two prompts' cost (not the output's): less than the whole.
    assert!(notes_usd > 0.0 && host_usd > notes_usd, "{stats}");
    assert!(host_usd + notes_usd < TURN_USD + ANSWER_USD, "{stats}");
    let tokens = host["context"]["approx_tokens"].as_u64().unwrap()
        + notes["context"]["approx_tokens"].as_u64().unwrap();
    assert!(tokens > 0 && tokens < 39_616 + 35_391, "{tokens}");
    assert!(
        text.contains("notes (mcp): 5 tools, asked for 1 time, definitions ≈ "),
        "{text}"
    );
    assert!(text.contains(LABEL), "{text}");
}

#[test]
fn the_tui_list_has_each_traces_cost_where_there_is_room() {
    let hops = claude_code_hops();
    let row = TraceRow {
        id: "cc1".into(),
        title: Some("Add buy milk to my notes".into()),
        kind: "request".into(),
        started_unix_ns: 0,
        ended_unix_ns: Some(3_000_000_000),
        created_by: "correlate".into(),
    };
    let mut app = App::browser("tracer.db");
    app.update(Action::TracesLoaded {
        rows: vec![row],
        token: tracer::tui::action::PollToken::default(),
        partial: false,
        sessions: Default::default(),
    });
    app.update(Action::FactsLoaded(
        [("cc1".to_string(), tracer::tui::facts::TraceFacts::of(&hops))]
            .into_iter()
            .collect(),
    ));
    let draw = |app: &mut App, width| {
        let mut terminal = Terminal::new(TestBackend::new(width, 6)).unwrap();
        terminal.draw(|frame| view::render(app, frame)).unwrap();
        format!("{}", terminal.backend())
    };
    let wide = draw(&mut app, 120);
    assert!(wide.contains("COST"), "{wide}");
    assert!(wide.contains("≈ $0.1888"), "{wide}");
    let narrow = draw(&mut app, 80);
    assert!(
        !narrow.contains("COST"),
        "the title keeps its room: {narrow}"
    );
}
