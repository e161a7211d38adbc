//! Interop, issue 23: the same real agent run back to back through one tracer proxy, the
//! upstream pausing once the tool call is complete (the host runs the tool meanwhile): every run
//! is a session of its own with a setup trace and a request trace, named by the host's own id;
//! `correlate --rebuild` decides what live grouping did; the tool call is numbered after the
//! answer that asked for it. Skips as interop_agents does when the agent is not installed.

use serde_json::Value;

use super::interop_agents::{Agent, CLAUDE_CODE, CODEX, Run, messages, run};

fn partition(run: &Run) -> Vec<(String, Vec<String>)> {
    let sessions = run.tracer(&["ls", "--sessions"]);
    let mut out: Vec<(String, Vec<String>)> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let mut traces: Vec<String> = s["traces"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    format!(
                        "{}:{}",
                        t["kind"].as_str().unwrap(),
                        t["id"].as_str().unwrap()
                    )
                })
                .collect();
            traces.sort();
            (
                s["host_session_id"].as_str().unwrap_or("-").to_string(),
                traces,
            )
        })
        .collect();
    out.sort();
    out
}

fn runs_back_to_back(agent: &Agent, runs: usize) {
    let count = runs.to_string();
    let Some(run) = run(
        agent,
        &["--linger-ms=300"],
        &["--runs", &count, "--gap", "1.5"],
    ) else {
        return;
    };
    let codes = &run.summary["exit_codes"];
    assert_eq!(codes.as_array().map(Vec::len), Some(runs), "{codes}");
    assert!(
        codes.as_array().unwrap().iter().all(|c| c == 0),
        "{:#}",
        run.summary
    );
    assert_eq!(run.summary["notes"], "buy milk\n".repeat(runs));
    let live = partition(&run);
    assert_eq!(live.len(), runs, "one session per run: {live:#?}");
    for (host, traces) in &live {
        assert_ne!(
            host, "-",
            "the session is named by the host's id: {live:#?}"
        );
        let kinds: Vec<&str> = traces.iter().map(|t| &t[..t.find(':').unwrap()]).collect();
        assert_eq!(kinds, ["request", "setup"], "{live:#?}");
    }
    for log in run.hop_logs() {
        let number = |case: &str| {
            messages(&log)
                .find(|m| m["case"] == case)
                .and_then(|m: &Value| m["number"].as_u64())
        };
        if let (Some(asked), Some(ran)) = (number("model_tool_call"), number("mcp_tool_call")) {
            assert!(asked < ran, "asked {asked}, ran {ran}: {:#}", log["trace"]);
        }
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["correlate", "--rebuild", "--db"])
        .arg(&run.db)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        partition(&run),
        live,
        "rebuild decides as live grouping did"
    );
}

#[test]
fn three_codex_runs_back_to_back_are_three_sessions() {
    runs_back_to_back(&CODEX, 3);
}

#[test]
fn two_claude_code_runs_back_to_back_are_two_sessions() {
    runs_back_to_back(&CLAUDE_CODE, 2);
}
