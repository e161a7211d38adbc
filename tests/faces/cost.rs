//! Claude Code's two recorded turns (tests/fixtures/agents/claude-code/) priced through every
//! face: `show`, the hop log, `ls`, `ls --sessions`-free `ls --json`, md, html, OTLP, `diff`,
//! the TUI, and `--prices` overriding the built-in table. Claude Code's own `total_cost_usd` for
//! these calls was 0.1888 (tests/fixtures/agents/README.md).

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use tracer::export::hop_log::HopLog;
use tracer::hop::{BodyCapture, Header};
use tracer::store::traces::TraceRow;
use tracer::trace::RecordedHop;
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::view;

use crate::trace_hops::hop;

const CALL_REQUEST: &[u8] = include_bytes!("../fixtures/agents/claude-code/turn1_request.json");
const CALL_STREAM: &[u8] = include_bytes!("../fixtures/agents/claude-code/turn1_response.sse");
const ANSWER_REQUEST: &[u8] = include_bytes!("../fixtures/agents/claude-code/turn2_request.json");
const ANSWER_STREAM: &[u8] = include_bytes!("../fixtures/agents/claude-code/turn2_response.sse");

/// claude-opus-4-8 at LiteLLM's list prices ($5 in, $25 out, $0.50 cache read, $6.25 cache write
/// for 5 minutes, $10 for 1 hour, per million): the tool-call turn, 4,957 in + 12,758 + 5,000
/// written + 16,901 read + 133 out.
const TURN_USD: f64 = 0.024785 + 0.0797375 + 0.05 + 0.0084505 + 0.003325;
/// The final answer: 312 in + 420 written for 5 minutes + 34,659 read + 41 out.
const ANSWER_USD: f64 = 0.00156 + 0.002625 + 0.0173295 + 0.001025;
const LABEL: &str = "estimate at list prices, LiteLLM table as of 2026-12-01";

fn model_hop(id: &str, start_ms: i64, end_ms: i64, request: &[u8], body: &[u8]) -> RecordedHop {
    let mut hop = hop(
        id,
        tracer::hop::Role::Model,
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

pub(crate) fn claude_code_hops() -> Vec<RecordedHop> {
    vec![
        model_hop("cc1", 0, 2_000, CALL_REQUEST, CALL_STREAM),
        model_hop("cc2", 2_100, 3_000, ANSWER_REQUEST, ANSWER_STREAM),
    ]
}

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

    // `--changes`: the second request adds the answer and the tool's result, nothing else.
    let changes = tracer(&db, &["show", &id, "--changes"]);
    assert!(
        changes.contains("request 1: the first of its conversation (78.3 KB)\n"),
        "{changes}"
    );
    assert!(
        changes.contains("request 3 against request 1:\n  messages 3-4 added\n"),
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
