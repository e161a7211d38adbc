//! Hostile recorded content through the faces `hostile.rs` does not drive: `serve-replay`'s
//! listing of what it answers, `tracer mcp`'s text results (an MCP client prints them), and a
//! failing command's one error line; and `tracer up` never prints a URL's credentials.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::hostile::{HOSTILE_ID, TITLE, TOOL, assert_no_raw_controls, hostile_db, hostile_log};
use crate::sample_db::TRACER;

const PATH: &str = "/api/chat\u{1b}]52;c;SGk=\u{7}\u{202e}";

#[test]
fn serve_replay_lists_hostile_paths_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = hostile_log();
    for message in log["messages"].as_array_mut().unwrap() {
        if message["path"] == "/api/chat" {
            message["path"] = Value::from(PATH);
        }
    }
    let file = dir.path().join("hostile-paths.json");
    std::fs::write(&file, serde_json::to_vec(&log).unwrap()).unwrap();
    let mut child = Command::new(TRACER)
        .arg("serve-replay")
        .arg(&file)
        .args(["--listen", "127.0.0.1:0"])
        .env("NO_COLOR", "1")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut listing = String::new();
    // The banner, then one line per recorded request; the model's two come last.
    while let Some(Ok(line)) = lines.next() {
        listing.push_str(&line);
        listing.push('\n');
        if listing.matches("/api/chat").count() == 2 {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_no_raw_controls("serve-replay", &listing);
    assert!(listing.contains("/api/chat\\x1b]52"), "{listing}");
}

#[test]
fn tracer_mcp_text_results_carry_no_raw_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let (_, db) = hostile_db(dir.path());
    let call = |id: u64, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let mut requests = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    requests.push(call(1, "list_traces", json!({})));
    requests.push(call(2, "get_trace", json!({"id": HOSTILE_ID})));
    requests.push(call(3, "tool_stats", json!({})));
    requests.push(call(
        4,
        "get_message",
        json!({"id": HOSTILE_ID, "number": 5}),
    ));
    let answers = crate::mcp_server::stdio_session(&db, &requests);
    let texts: Vec<&str> = answers
        .iter()
        .filter_map(|a| a["result"]["content"][0]["text"].as_str())
        .collect();
    assert_eq!(texts.len(), 4, "{answers:?}");
    for text in &texts {
        assert_no_raw_controls("tracer mcp", text);
    }
    // Shown as escapes, and the title cannot forge a line of its own.
    assert!(texts[0].contains("append\\u{202e}"), "{}", texts[0]);
    assert!(
        !texts[1].lines().any(|l| l.starts_with("# Forged")),
        "{}",
        texts[1]
    );
    assert!(TITLE.contains('\n') && TOOL.contains('\u{202e}'));
}

#[test]
fn a_failing_commands_line_shows_recorded_text_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = hostile_log();
    for hop in log["hops"].as_array_mut().unwrap() {
        if hop["route"] == "agent" {
            hop["route"] = Value::from("agent\u{1b}]52;c;SGk=\u{7}\u{202e}");
        }
    }
    let file = dir.path().join("hostile-route.json");
    std::fs::write(&file, serde_json::to_vec(&log).unwrap()).unwrap();
    // A database with no proxy announced in it: rerun says no proxy serves the route.
    let (_, db) = hostile_db(dir.path());
    let output = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .arg("rerun")
        .arg(&file)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_no_raw_controls("rerun's error", &stderr);
    assert!(stderr.contains("agent\\x1b]52"), "{stderr}");
}

#[test]
fn tracer_up_never_prints_the_credentials_of_its_model_url() {
    let dir = tempfile::tempdir().unwrap();
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
            .to_string()
    };
    // Nothing answers at the model URL: `up` warns, naming it, then serves; stopped at once.
    let dead = free();
    let mut child = Command::new(TRACER)
        .arg("--db")
        .arg(dir.path().join("t.db"))
        .arg("up")
        .args([
            "--ollama",
            &format!("http://user:UPSECRET@127.0.0.1:{dead}"),
        ])
        .args([
            "--agent-port",
            &free(),
            "--mcp-port",
            &free(),
            "--model-port",
            &free(),
        ])
        .args([
            "--agent-internal-port",
            &free(),
            "--mcp-internal-port",
            &free(),
        ])
        .arg("--notes")
        .arg(dir.path().join("notes"))
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    while let Some(Ok(line)) = lines.next() {
        said.push_str(&line);
        said.push('\n');
        if line.contains("no model server") {
            break;
        }
    }
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    );
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("no model server"), "{said}");
    assert!(
        !said.contains("UPSECRET") && !stdout.contains("UPSECRET"),
        "{said}{stdout}"
    );
    assert!(said.contains("[redacted]@127.0.0.1"), "{said}");
}
