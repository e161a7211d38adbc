//! `tracer fork` of a real agent's run: Claude Code (from npm, offline against the scripted
//! upstream) asks for a host-run `Bash echo hello`, then the notes server's append. A fork at its
//! second model request (message 3) is refused without --allow-local-tools, naming the Bash call
//! its replayed first answer would make the host run again; with --sandbox it runs the recorded
//! command again in a copy of the project: the first model request is answered from the recording
//! (the upstream never sees it), the rest goes live, and the project folder is left as it was.

use serde_json::Value;

use super::run_agents::{CLAUDE, run};

#[test]
fn a_real_agents_run_is_forked_at_its_second_model_request() {
    let Some(run) = run(&CLAUDE, &["--shell-first", "--fork-at", "3"]) else {
        return;
    };
    let s = &run.summary;
    assert_eq!(s["exit_code"], 0, "{s:#}");
    let forks = &s["forks"];
    let original = forks["trace"].as_str().unwrap_or_else(|| panic!("{s:#}"));
    let [refused, sandboxed] = [&forks["runs"][0], &forks["runs"][1]];

    // Refused: the calls listed, nothing run, nothing sent.
    assert_eq!(refused["exit_code"], 2, "{refused:#}");
    let said = refused["stderr"].as_str().unwrap();
    assert!(
        said.contains("message 2: Bash {\"command\":\"echo hello\"")
            && said.contains("--allow-local-tools"),
        "{said}"
    );
    assert_eq!(refused["before"], refused["after"], "{refused:#}");

    // With --sandbox: shown, run in a copy, the first request answered from the recording.
    assert_eq!(sandboxed["exit_code"], 0, "{sandboxed:#}");
    let said = sandboxed["stderr"].as_str().unwrap();
    assert!(said.contains("tracer fork runs again, in "), "{said}");
    assert!(said.contains("(a sandbox copy of it)"), "{said}");
    let out = sandboxed["stdout"].as_str().unwrap();
    // Message 1 and the run's side calls before message 3 (outside the trace) were replayed.
    let replayed: u64 = out
        .split(" requests answered from the recording")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{out}\n{said}"));
    assert!(replayed >= 1, "{out}");
    assert!(out.contains("live from message 3"), "{out}");
    assert!(out.contains("ran in a copy of "), "{out}");
    assert_eq!(
        sandboxed["before"]["project"], sandboxed["after"]["project"],
        "the project folder changed: {sandboxed:#}"
    );
    // The upstream saw only the live part: message 3 and the request after append's result.
    let sent = sandboxed["after"]["upstream_requests"].as_u64().unwrap()
        - sandboxed["before"]["upstream_requests"].as_u64().unwrap();
    let recorded_requests = sandboxed["before"]["upstream_requests"].as_u64().unwrap();
    assert_eq!(sent + replayed, recorded_requests, "{sandboxed:#}");

    // The fork is its own trace, linked to the original.
    let listed = run.tracer(&["ls"]);
    let fork = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["fork"]["of"] == original)
        .unwrap_or_else(|| panic!("{listed:#}"));
    assert_eq!(fork["fork"]["at"], 3);
    assert_eq!(fork["fork"]["replayed"], replayed);
    let shown: Value = run.tracer(&["show", fork["id"].as_str().unwrap()]);
    let tools = shown["trace"]["host_tools_used"].to_string();
    assert!(tools.contains("Bash"), "the host ran Bash again: {shown:#}");
}
