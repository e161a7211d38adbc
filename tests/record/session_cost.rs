//! `tracer ls --sessions`: each session's tokens and cost, the sum of its traces', labelled as
//! billed across its calls (Claude Code's two recorded runs, one session each).

use crate::agent_sessions::rebuilt;

fn ls(db: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("tracer ls");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).expect("text")
}

#[tokio::test]
async fn each_session_is_billed_the_sum_of_its_traces() {
    let (dir, store, _hops) = rebuilt("claude-code-2-runs.json").await;
    store.close().await;
    let db = dir.path().join("tracer.db");
    let listed: serde_json::Value =
        serde_json::from_str(&ls(&db, &["ls", "--sessions", "--json"])).expect("JSON");
    let sessions = listed.as_array().expect("an array");
    assert_eq!(sessions.len(), 2);
    for session in sessions {
        let traces = session["traces"].as_array().expect("traces");
        let usd: f64 = traces
            .iter()
            .filter_map(|t| t["cost"]["usd"].as_f64())
            .sum();
        let calls: u64 = traces
            .iter()
            .filter_map(|t| t["cost"]["calls"].as_u64())
            .sum();
        assert!(calls >= 2, "{session}");
        assert_eq!(session["cost"]["calls"].as_u64(), Some(calls));
        assert_eq!(
            session["cost"]["unpriced_calls"], 0,
            "claude-opus-4-8 is priced"
        );
        let total = session["cost"]["usd"].as_f64().expect("priced");
        assert!((total - usd).abs() < 1e-12 && total > 0.0, "{session}");
        assert!(session["tokens"]["prompt"].as_u64().is_some_and(|p| p > 0));
    }
    let text = ls(&db, &["ls", "--sessions"]);
    let billed = text
        .lines()
        .filter(|l| l.starts_with("  billed across "))
        .count();
    assert_eq!(billed, 2, "{text}");
    assert!(
        text.contains("(estimate at list prices, LiteLLM table as of 2026-12-01)"),
        "{text}"
    );
}
