//! The words of a first `tracer run`, recorded for real (curl through the run's proxy to a plain
//! HTTP server on a loopback socket): a generic program's `GET /` said once with what came back;
//! a model request sent again as it was named a resend (`identical to request N: a retry?`),
//! apart from one where only a cache mark moved; and `--changes` naming each message a request
//! added by its role, kind and first words.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use super::run_cli::tracer_run;

/// A plain HTTP/1.1 server on a loopback port: `/v1/messages` answers as Anthropic does, any
/// other path with a small HTML page. Serves until the test ends.
fn upstream() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || answer(stream));
        }
    });
    port
}

fn answer(stream: std::net::TcpStream) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let (kind, answer) = if path == "/v1/messages" {
            (
                "application/json",
                r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":3}}"#.to_string(),
            )
        } else {
            (
                "text/html; charset=utf-8",
                "<!DOCTYPE html><html><body>hello</body></html>".to_string(),
            )
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        );
        let stream = reader.get_mut();
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(answer.as_bytes()).unwrap();
    }
}

fn tracer(dir: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(dir.join("run.db"))
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The id of the one trace of the run's database.
fn only_trace(dir: &Path) -> String {
    let listed: serde_json::Value = serde_json::from_str(&tracer(dir, &["ls", "--json"])).unwrap();
    let traces = listed.as_array().unwrap();
    assert_eq!(traces.len(), 1, "{listed}");
    traces[0]["id"].as_str().unwrap().to_string()
}

#[test]
fn a_generic_programs_get_is_said_once_with_what_came_back() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/", upstream());
    let run = tracer_run(
        dir.path(),
        &[],
        &["--", "curl", "-s", "-o", "/dev/null", &url],
    );
    assert!(run.status.success(), "{run:?}");
    let shown = tracer(dir.path(), &["show", &only_trace(dir.path())]);
    let request = shown
        .lines()
        .find(|l| l.contains(" → agent → 127.0.0.1  GET /"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        request.contains("  GET /  answered 200 · text/html · 46 B  ("),
        "{request}"
    );
    assert!(!request.contains("GET /  GET /"), "{request}");
}

/// A Messages API body: the user's words, then `more` messages.
fn messages_body(more: &[serde_json::Value], marked: bool) -> String {
    let mut user = serde_json::json!({"role": "user", "content": [
        {"type": "text", "text": "Add buy milk to my notes"}]});
    if marked {
        user["content"][0]["cache_control"] = serde_json::json!({"type": "ephemeral"});
    }
    let mut messages = vec![user];
    messages.extend(more.iter().cloned());
    serde_json::json!({"model": "claude-opus-4-8", "max_tokens": 1024,
        "system": "You keep notes.", "messages": messages})
    .to_string()
}

#[test]
fn a_resend_is_named_apart_from_moved_marks_and_added_messages_by_their_words() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/v1/messages", upstream());
    let call = serde_json::json!({"role": "assistant", "content": [
        {"type": "text", "text": "I'll add it."},
        {"type": "tool_use", "id": "toolu_01Append", "name": "append",
         "input": {"content": "buy milk"}}]});
    let result = serde_json::json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01Append",
         "content": "Appended a line."}]});
    let bodies = [
        messages_body(&[], false),
        messages_body(&[], false),
        messages_body(&[], true),
        messages_body(&[call, result], true),
    ];
    let mut script = String::new();
    for (i, body) in bodies.iter().enumerate() {
        let file = dir.path().join(format!("body{i}.json"));
        std::fs::write(&file, body).unwrap();
        script.push_str(&format!(
            "curl -s -o /dev/null -H 'content-type: application/json' \
             -H 'anthropic-version: 2023-06-01' --data-binary @{} {url} && ",
            file.display()
        ));
    }
    script.push_str("true");
    let run = tracer_run(dir.path(), &[], &["--", "sh", "-c", &script]);
    assert!(run.status.success(), "{run:?}");
    let changes = tracer(dir.path(), &["show", &only_trace(dir.path()), "--changes"]);
    assert!(
        changes.contains(concat!(
            "request 3 against request 1:\n",
            "  identical to request 1: a retry?\n",
            "request 5 against request 3:\n",
            "  nothing changed but where the cache marks sit\n",
            "request 7 against request 5:\n",
            "  message 2 added: assistant, text + tool call append: \"I'll add it.\"\n",
            "  message 3 added: user, tool result for append (toolu_01Append): \"Appended a line.\"\n",
        )),
        "{changes}"
    );
}
