//! A tool call the host withdrew (`notifications/cancelled`) reads as withdrawn, on its own line
//! (`· withdrawn by the host in message N`), and what the server still sends after it (progress,
//! the answer) is named as coming after the withdrawal: over stdio through `tracer wrap` with a
//! real server process that ignores the cancel, in the recorded MCP tour of the reference server
//! (server-everything, stdio and HTTP), and not for opencode's cancel of a call already answered.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use tracer_export::hop_log::HopLog;
use tracer_trace::explain_trace;

use crate::agent_trace::agent_hops;

const IGNORES_CANCEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/stdio/ignores_cancel_server.py"
);

fn tracer(db: &std::path::Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn line_with<'a>(shown: &'a str, needle: &str) -> &'a str {
    shown
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{shown}"))
}

#[test]
fn a_call_withdrawn_over_stdio_and_what_the_server_sent_after_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .args([
            "wrap",
            "--name",
            "slow",
            "--",
            "python3",
            "-u",
            IGNORES_CANCEL,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let send = |stdin: &mut std::process::ChildStdin, line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let mut read = || {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the server ended");
        line
    };
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
    );
    assert!(read().contains("ignores-cancel"));
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p2"}}}"#,
    );
    assert!(read().contains(r#""progress": 1"#));
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user pressed stop"}}"#,
    );
    assert!(read().contains(r#""progress": 2"#));
    assert!(read().contains("finished anyway"));
    // The host goes: the server sees EOF and exits, and so does tracer wrap.
    drop(stdin);
    assert!(child.wait().unwrap().success());

    let listed: serde_json::Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_string();
    let shown = tracer(&db, &["show", &id]);
    assert!(
        line_with(&shown, "  4 → agent → slow  tools/call")
            .contains("tools/call slow · withdrawn by the host in message 6  ("),
        "{shown}"
    );
    assert!(
        line_with(&shown, "  6 → agent → slow  notifications/cancelled")
            .contains("withdraws 4: user pressed stop"),
        "{shown}"
    );
    assert!(
        line_with(&shown, "  5 → slow → agent").contains("progress 1/2 on 4  ("),
        "{shown}"
    );
    assert!(
        line_with(&shown, "  7 → slow → agent")
            .contains("progress 2/2 on 4, after the host withdrew it in 6  ("),
        "{shown}"
    );
    assert!(
        line_with(&shown, "  8 → slow → agent")
            .contains("answers 4 after the host withdrew it in 6  ("),
        "{shown}"
    );
}

#[test]
fn the_reference_servers_tour_names_its_withdrawn_long_call_over_both_transports() {
    for (file, call, cancel) in [("stdio.json", 127, 128), ("http.json", 123, 124)] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mcp-tour")
            .join(file);
        let log = HopLog::from_file(&std::fs::read(path).unwrap()).unwrap();
        let messages = explain_trace(&log.recorded_hops());
        let request = &messages[call - 1];
        assert_eq!(request.number, call);
        assert!(
            request.summary.ends_with(&format!(
                "tools/call trigger-long-running-operation {{\"duration\":5,\"steps\":5}} · withdrawn by the host in message {cancel}"
            )),
            "{file}: {}",
            request.summary
        );
        assert!(
            messages[cancel - 1]
                .summary
                .starts_with(&format!("withdraws {call}")),
            "{file}: {}",
            messages[cancel - 1].summary
        );
        let withdrawn = messages
            .iter()
            .filter(|m| m.summary.contains("withdrawn by the host"))
            .count();
        assert_eq!(withdrawn, 1, "{file}");
    }
}

#[test]
fn a_cancel_sent_after_the_answer_withdraws_nothing() {
    // opencode cancels its tools/call once it has the answer (an AbortError on cleanup).
    let messages = explain_trace(&agent_hops("opencode"));
    let cancel = messages
        .iter()
        .find(|m| m.summary.starts_with("withdraws "))
        .expect("opencode's cancel");
    assert!(
        cancel.summary.contains(", already answered in "),
        "{}",
        cancel.summary
    );
    assert!(
        messages
            .iter()
            .all(|m| !m.summary.contains("withdrawn by the host")),
        "nothing was withdrawn"
    );
}
