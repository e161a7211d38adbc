//! A trace's status is its user request's: Claude Code's buy-milk turn with its account,
//! feature-flag and telemetry endpoints unreachable (each answered by tracer's 502) is `ok`, its
//! five failed side calls counted apart (`ok · 5 side calls failed`) in `summarize`, `ls`,
//! `show`, the Markdown and HTML handouts and the hop log; each side call is named with its
//! purpose; the host's own tools (Claude Code's `Bash`, its `Agent`) are listed apart from MCP's.

use std::path::Path;
use std::process::Command;

use crate::agent_trace::agent_hops;
use crate::hop_log::{assert_valid, schema_validator};
use crate::offline_side_calls::{SIDE_CALLS, claude_code_calling_bash, claude_code_offline};
use serde_json::Value;
use tracer_export::hop_log::HopLog;
use tracer_store::traces::TraceRow;
use tracer_store::{Store, hops as stored_hops};
use tracer_trace::{Case, Direction, RecordedHop, SideCall, TraceStatus, explain_trace, summarize};
use tracer_wire::hop::HopState;

const WORDS: &str = "Add buy milk to my notes";

fn tracer(db: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{args:?}: {text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    text
}

fn hop_log(hops: &[RecordedHop]) -> HopLog {
    let row = TraceRow {
        id: format!("{:0>32}", "c1"),
        title: Some(WORDS.into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: None,
        created_by: "test".into(),
    };
    HopLog::from_recorded(row, hops)
}

#[test]
fn failed_side_calls_are_counted_apart_from_the_status() {
    let hops = claude_code_offline();
    let summary = summarize(&hops);
    assert_eq!(summary.status, TraceStatus::Ok);
    assert_eq!(summary.side_calls_failed, SIDE_CALLS.len());
    assert_eq!(summary.status_words(), "ok · 5 side calls failed");
    assert_eq!(summary.title.as_deref(), Some(WORDS));

    // A failure of the user's own request still fails the trace: the last model call cut.
    let mut cut = claude_code_offline();
    let last = cut
        .iter_mut()
        .rfind(|hop| hop.start.path.starts_with("/v1/messages"))
        .unwrap();
    last.end.as_mut().unwrap().state = Some(HopState::Failed);
    let summary = summarize(&cut);
    assert_eq!(summary.status, TraceStatus::Failed);
    assert_eq!(summary.status_words(), "failed · 5 side calls failed");

    // Without failed side calls nothing changes.
    let plain = summarize(&agent_hops("claude-code"));
    assert_eq!(
        (plain.status_words(), plain.side_calls_failed),
        ("ok".into(), 0)
    );
}

#[test]
fn claude_codes_account_and_flag_endpoints_are_named_side_calls() {
    let hops = claude_code_offline();
    let messages = explain_trace(&hops);
    let expected = [
        (
            SideCall::Account,
            "its start-up settings for the account (bootstrap)",
        ),
        (
            SideCall::FeatureFlags,
            "whether the organization allows fast mode",
        ),
        (
            SideCall::Telemetry,
            "whether the organization lets it send metrics",
        ),
        (
            SideCall::FeatureFlags,
            "its feature flags, evaluated for this user",
        ),
        (SideCall::Telemetry, "its own event log"),
    ];
    for ((_, path, _), (kind, purpose)) in SIDE_CALLS.iter().zip(expected) {
        let hop = hops.iter().find(|h| h.start.path == *path).unwrap();
        let asked = messages
            .iter()
            .find(|m| m.hop_id == hop.start.id && m.direction == Direction::Request)
            .unwrap();
        assert_eq!(asked.side_call, Some(kind), "{path}");
        assert_eq!(asked.case, Case::AgentEndpoint, "{path}");
        let said = format!("side call ({}): Claude Code: {purpose}", kind.as_str());
        assert!(
            asked.summary.starts_with(&said),
            "{path}: {}",
            asked.summary
        );
        assert!(
            asked.explanation.contains("not as its status")
                && !asked
                    .explanation
                    .contains("does not read as a known dialect"),
            "{path}: {}",
            asked.explanation
        );
    }
}

#[test]
fn the_hosts_own_tools_are_listed_apart_from_mcp_tools() {
    // Recorded: Claude Code hands the task to a subagent with its own `Agent` tool.
    let summary = summarize(&agent_hops("claude-code-subagent"));
    assert_eq!(summary.tools_used, ["append"]);
    assert_eq!(summary.host_tools_used, ["Agent"]);
    assert_eq!(
        summary.tools_words(", ").as_deref(),
        Some("append (mcp) · Agent (host)")
    );
    // The model asks for Claude Code's own Bash, which no tools/call runs.
    let summary = summarize(&claude_code_calling_bash());
    assert_eq!(summary.host_tools_used, ["Bash"]);
    // MCP tools alone read as before; every recorded agent's MCP call stays MCP's.
    for agent in ["claude-code", "codex", "gemini-cli", "opencode"] {
        let summary = summarize(&agent_hops(agent));
        assert_eq!(summary.tools_used, ["append"], "{agent}");
        assert!(summary.host_tools_used.is_empty(), "{agent}");
        assert_eq!(summary.tools_words(",").as_deref(), Some("append"));
    }
}

#[test]
fn ls_show_and_the_exports_say_ok_with_the_side_calls_counted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = dir.path().join("offline.json");
    let log = hop_log(&claude_code_offline());
    let text = log.to_json_pretty();
    assert_valid(&schema_validator(), &text);
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["version"], 5);
    assert_eq!(json["trace"]["status"], "ok");
    assert_eq!(json["trace"]["side_calls_failed"], 5);
    std::fs::write(&file, &text).unwrap();
    tracer(&db, &["import", file.to_str().unwrap()]);

    let listed: Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    assert_eq!(listed[0]["status"], "ok");
    assert_eq!(listed[0]["side_calls_failed"], 5);
    let table = tracer(&db, &["ls"]);
    let row = table.lines().nth(1).unwrap();
    assert!(row.contains(" ok · 5 side calls failed "), "{table}");
    // The status column widens for it: the next column still starts under its head.
    let head = table.lines().next().unwrap();
    let (status_at, tokens_at) = (head.find("STATUS").unwrap(), head.find("TOKENS").unwrap());
    let cells: Vec<char> = row.chars().collect();
    let status: String = cells[status_at..tokens_at].iter().collect();
    assert_eq!(status.trim_end(), "ok · 5 side calls failed", "{table}");
    assert!(
        cells[tokens_at - 1] == ' ' && cells[tokens_at] != ' ',
        "{table}"
    );

    let id = json["trace"]["id"].as_str().unwrap();
    let shown = tracer(&db, &["show", id]);
    let facts = shown.lines().nth(1).unwrap();
    assert!(facts.contains(" · ok · 5 side calls failed"), "{facts}");
    assert!(
        shown.contains(
            "side call (the agent's account and settings): Claude Code: its start-up settings"
        ),
        "{shown}"
    );
    let markdown = tracer(&db, &["export", id, "--format", "md"]);
    assert!(
        markdown.contains("Status: ok · 5 side calls failed"),
        "{markdown}"
    );
    let html = tracer(&db, &["export", id, "--format", "html"]);
    assert!(html.contains(" · ok · 5 side calls failed · "), "html");
    // The hop log `show --json` writes says the same, and reads back.
    let exported = tracer(&db, &["show", id, "--json"]);
    let again: Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(again["trace"]["side_calls_failed"], 5);
    assert_eq!(exported, text, "export → import → export is byte-identical");
}

#[test]
fn an_old_hop_log_of_the_run_imports_and_lists_ok() {
    // The same run as a version 4 log wrote it: `failed`, no side-call count.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut json: Value =
        serde_json::from_str(&hop_log(&claude_code_offline()).to_json_pretty()).unwrap();
    json["version"] = 4.into();
    json["trace"]["status"] = "failed".into();
    json["trace"]
        .as_object_mut()
        .unwrap()
        .remove("side_calls_failed");
    let file = dir.path().join("old.json");
    std::fs::write(&file, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    tracer(&db, &["import", file.to_str().unwrap()]);
    let listed: Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    assert_eq!(
        (&listed[0]["status"], &listed[0]["side_calls_failed"]),
        (&Value::from("ok"), &Value::from(5))
    );
}

#[tokio::test]
async fn grouped_live_every_trace_of_the_run_is_ok_and_a_kept_summary_is_computed_again() {
    // The hops as the proxy writes them, grouped by `tracer ls` however grouping splits them.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let store = Store::open(&db).await.unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    for hop in claude_code_offline() {
        stored_hops::insert_start(&mut conn, &hop.start)
            .await
            .unwrap();
        stored_hops::apply_end(&mut conn, hop.end.as_ref().unwrap())
            .await
            .unwrap();
    }
    drop(conn);
    store.close().await;
    let listed: Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    let traces = listed.as_array().unwrap();
    assert!(traces.iter().all(|t| t["status"] == "ok"), "{listed:#}");
    let counted: u64 = traces
        .iter()
        .map(|t| t["side_calls_failed"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(counted, 5, "{listed:#}");

    // A summary kept by an earlier build (its key without this build's summary revision,
    // saying `failed`) is not read: it is computed again.
    let store = Store::open(&db).await.unwrap();
    for trace in traces {
        let id = trace["id"].as_str().unwrap();
        let kept = store.kept_summary(id).await.unwrap();
        assert!(kept.summary.is_some(), "ls keeps what it computed");
        let old_key = kept.key.replace("+summary.2", "");
        let mut stale = trace.clone();
        stale["status"] = "failed".into();
        stale.as_object_mut().unwrap().remove("side_calls_failed");
        stale.as_object_mut().unwrap().remove("session");
        store
            .keep_summary(id, &old_key, &stale.to_string())
            .await
            .unwrap();
    }
    store.close().await;
    let again: Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    assert_eq!(again, listed);
}
