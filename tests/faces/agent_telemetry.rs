//! The agent's own telemetry received and shown: Claude Code's recorded OTLP exports (protobuf
//! and OTLP/JSON, tests/fixtures/agents/claude-code/otlp) sent to `tracer proxy --otlp-listen`
//! over the wire recording of the same run; every record stored, bad requests refused with a
//! reason and nothing stored, each event placed at its step in `show`, the hop log and the web
//! UI in Chromium.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::interop_ui::*;
use crate::sample_db::TRACER;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agents/claude-code/otlp"
);

/// The fixture's wire database, unzipped into `dir`.
fn wire_db(dir: &Path, folder: &str) -> PathBuf {
    unzipped_db(&format!("{FIXTURES}/{folder}/wire.db.gz"), dir)
}

/// A gzipped database fixture, unzipped into `dir` as `wire.db`.
pub(crate) fn unzipped_db(gz: &str, dir: &Path) -> PathBuf {
    let zipped = std::fs::read(gz).unwrap();
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(zipped.as_slice())
        .read_to_end(&mut bytes)
        .unwrap();
    let db = dir.join("wire.db");
    std::fs::write(&db, bytes).unwrap();
    db
}

/// One OTLP/JSON logs request of one record of Claude Code's with these string attributes.
fn one_log(at_unix_ns: &str, attributes: &[(&str, &str)]) -> Vec<u8> {
    let list: Vec<Value> = (attributes.iter())
        .map(|(k, v)| serde_json::json!({"key": k, "value": {"stringValue": v}}))
        .collect();
    serde_json::json!({"resourceLogs": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "claude-code"}}]},
        "scopeLogs": [{"logRecords": [{"timeUnixNano": at_unix_ns, "attributes": list}]}]}]})
    .to_string()
    .into_bytes()
}

/// `tracer proxy --otlp-listen` over `db`, and the receiver's address.
fn receiver(db: &Path) -> (Child, String, std::thread::JoinHandle<String>) {
    let mut child = Command::new(TRACER)
        .args(["--db"])
        .arg(db)
        .args([
            "proxy",
            "--route",
            "model=127.0.0.1:0=http://127.0.0.1:9",
            "--otlp-listen",
            "127.0.0.1:0",
        ])
        .env("RUST_LOG", "off")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    let addr = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("no receiver line: {said}"))
            .unwrap();
        said.push_str(&line);
        said.push('\n');
        if let Some(rest) = line.split("telemetry on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    let rest = std::thread::spawn(move || {
        lines.map_while(Result::ok).fold(said, |mut all, line| {
            all.push_str(&line);
            all.push('\n');
            all
        })
    });
    (child, addr, rest)
}

/// POSTs a body; the status and the answer's body.
fn post(addr: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let at = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    (status, answer[at..].to_vec())
}

fn stop(mut child: Child, rest: std::thread::JoinHandle<String>) -> String {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    child.wait().unwrap();
    rest.join().unwrap()
}

fn tracer_json(db: &Path, args: &[&str]) -> Value {
    let out = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tracer {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The recorded exports of `folder` received over its wire; the database and the buy-milk trace.
fn received(dir: &Path, folder: &str) -> (PathBuf, String) {
    let db = wire_db(dir, folder);
    let (child, addr, rest) = receiver(&db);
    let index: Value =
        serde_json::from_slice(&std::fs::read(format!("{FIXTURES}/{folder}/index.json")).unwrap())
            .unwrap();
    let mut records = 0;
    for request in index["requests"].as_array().unwrap() {
        let body = std::fs::read(format!(
            "{FIXTURES}/{folder}/{}",
            request["file"].as_str().unwrap()
        ))
        .unwrap();
        let content_type = request["content_type"].as_str().unwrap();
        let (status, answer) = post(
            &addr,
            request["path"].as_str().unwrap(),
            content_type,
            &body,
        );
        assert_eq!(
            status,
            200,
            "{request}: {}",
            String::from_utf8_lossy(&answer)
        );
        if content_type.contains("json") {
            assert_eq!(answer, b"{}");
        } else {
            assert!(answer.is_empty(), "an empty ExportLogsServiceResponse");
        }
        records += 1;
    }
    assert!(records >= 3);
    // An event of a session no trace has: kept, and listed as unplaced.
    let stray = one_log(
        "1000",
        &[
            ("event.name", "hook_execution_complete"),
            ("session.id", "a-session-no-trace-has"),
            ("hook_event_name", "PreToolUse"),
        ],
    );
    let (status, _) = post(&addr, "/v1/logs", "application/json", &stray);
    assert_eq!(status, 200);
    // Bad requests: refused with a reason, nothing stored.
    let (status, answer) = post(
        &addr,
        "/v1/logs",
        "application/x-protobuf",
        b"\xff\xff\xff\xff",
    );
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&answer));
    let (status, answer) = post(&addr, "/v1/logs", "text/plain", b"hello");
    assert_eq!(status, 415);
    assert!(String::from_utf8_lossy(&answer).contains("application/x-protobuf"));
    let (status, _) = post(&addr, "/v1/other", "application/json", b"{}");
    assert_eq!(status, 404);
    let said = stop(child, rest);
    let line = said
        .lines()
        .find(|l| l.contains("records received"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(line.ends_with("stored, 2 requests refused"), "{line}");
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(n[0], n[2], "{line}");
    let traces = tracer_json(&db, &["ls", "--json"]);
    let trace = traces
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["title"] == "Add buy milk to my notes")
        .unwrap();
    (db, trace["id"].as_str().unwrap().to_string())
}

/// `tracer export TRACE --format FORMAT` over `db`, which must succeed.
fn export(db: &Path, trace: &str, format: &str) -> String {
    let out = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(["export", trace, "--format", format])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn placed(db: &Path, trace: &str) -> Vec<Value> {
    let log = tracer_json(db, &["show", trace, "--json"]);
    assert_eq!(log["version"], 6);
    log["agent_events"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{log:#}"))
}

#[test]
fn recorded_protobuf_exports_are_stored_and_placed() {
    let dir = tempfile::tempdir().unwrap();
    let (db, trace) = received(dir.path(), "protobuf");
    let events = placed(&db, &trace);
    let rule = |name: &str| {
        events
            .iter()
            .find(|e| e["name"] == name)
            .map(|e| e["rule"].as_str().unwrap().to_string())
    };
    assert_eq!(rule("tool_decision").as_deref(), Some("tool call id"));
    assert_eq!(rule("api_request").as_deref(), Some("request id"));
    assert_eq!(rule("user_prompt").as_deref(), Some("prompt id"));
    let spans = events.iter().filter(|e| e["signal"] == "span").count();
    assert!(spans > 0, "the beta traces are placed too: {events:#?}");
    let text = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["show", &trace])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("⋯ agent  Claude Code ran Bash `echo hello` itself: success"),
        "{text}"
    );
    assert!(
        !text.contains("claude_code.token.usage"),
        "metric points stay in the hop log: {text}"
    );
    // `tracer events` lists each by session with its place, the stray one unplaced.
    let listed = tracer_json(&db, &["events", "--json"]);
    let listed = listed.as_array().unwrap();
    let stray = listed
        .iter()
        .find(|e| e["session"] == "a-session-no-trace-has")
        .unwrap();
    assert_eq!(stray["trace_id"], Value::Null, "{stray:#}");
    assert_eq!(stray["sentence"], "PreToolUse hook ran");
    let bash = listed
        .iter()
        .find(|e| e["name"] == "tool_result" && e["attributes"]["tool_name"] == "Bash")
        .unwrap();
    assert_eq!(bash["trace_id"], trace.as_str());
    assert_eq!(bash["placed_by"], "tool call id");
    let unplaced = tracer_json(&db, &["events", "--unplaced", "--json"]);
    assert_eq!(unplaced.as_array().unwrap().len(), 1, "{unplaced:#}");
    // The handouts put them under the message they follow.
    let ran = events.iter().find(|e| e["name"] == "tool_result").unwrap();
    let after = ran["after_message"].as_u64().unwrap();
    let export = |format: &str| export(&db, &trace, format);
    let md = export("md");
    let line = md
        .find("Claude Code ran Bash \\`echo hello\\` itself")
        .unwrap_or_else(|| panic!("{md}"));
    let heading = md.find(&format!("\n### {after}. ")).unwrap();
    let next = md.find(&format!("\n### {}. ", after + 1)).unwrap();
    assert!(heading < line && line < next, "under message {after}");
    let html = export("html");
    assert!(
        html.contains(&format!("<p class=\"agent-event\" data-after=\"{after}\">")),
        "{html}"
    );
    assert!(html.contains("ran Bash `echo hello` itself"));
    // The OpenTelemetry export hangs them on the spans of the hops they follow.
    let otlp: Value = serde_json::from_str(&export("otlp")).unwrap();
    let span_events: Vec<(String, String)> = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|span| {
            let name = span["name"].as_str().unwrap().to_string();
            let events = span["events"].as_array().cloned().unwrap_or_default();
            events
                .into_iter()
                .map(move |e| (name.clone(), e["name"].as_str().unwrap().to_string()))
        })
        .collect();
    assert!(
        span_events
            .iter()
            .any(|(span, event)| span.starts_with("chat ") && event == "agent.tool_result"),
        "{span_events:?}"
    );
    assert!(
        span_events
            .iter()
            .any(|(span, event)| span.starts_with("execute_tool") && event == "agent.tool_result")
    );
    // A hop-log file carries them: `show FILE` prints them without the database.
    let file = db.with_file_name("log.json");
    std::fs::write(&file, export("json")).unwrap();
    let from_file = Command::new(TRACER)
        .args(["show"])
        .arg(&file)
        .output()
        .unwrap();
    let from_file = String::from_utf8(from_file.stdout).unwrap();
    assert!(
        from_file.contains("⋯ agent  Claude Code ran Bash `echo hello` itself"),
        "{from_file}"
    );
}

#[test]
fn recorded_json_exports_are_stored_and_placed() {
    let dir = tempfile::tempdir().unwrap();
    let (db, trace) = received(dir.path(), "json");
    let events = placed(&db, &trace);
    let cost = events
        .iter()
        .find(|e| e["cost_check"].is_string())
        .unwrap_or_else(|| panic!("{events:#?}"));
    assert!(
        cost["cost_check"].as_str().unwrap().contains("they agree"),
        "{cost:#}"
    );
}

#[test]
fn interop_ui_shows_the_agents_own_events_among_the_messages() {
    let Some(peers) = peers() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (db, trace) = received(dir.path(), "protobuf");
    let server = ui(&db, crate::free_ports::free_port());
    let db_arg = db.to_str().unwrap();
    let result = run(
        &peers,
        &server.url,
        "agent",
        &["--db", db_arg, "--trace", &trace],
    );
    assert_clean(&result);
    let rows = result["agent_rows"].as_array().unwrap();
    assert!(
        rows.iter().any(|r| r[1]
            .as_str()
            .unwrap()
            .contains("ran Bash `echo hello` itself")),
        "{rows:#?}"
    );
}

#[test]
fn tracer_mcp_tells_an_assistant_the_agents_own_account() {
    let dir = tempfile::tempdir().unwrap();
    let (db, trace) = received(dir.path(), "protobuf");
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let get = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_trace", "arguments": {"id": trace}}});
    let answers = crate::mcp_server::stdio_session(&db, &[initialize, get]);
    let text = answers[1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("⋯ the agent's own account: Claude Code ran Bash `echo hello` itself"),
        "{text}"
    );
    let events = answers[1]["result"]["structuredContent"]["agent_events"]
        .as_array()
        .unwrap();
    assert!(
        events.iter().any(|e| e["placed_by"] == "tool call id"),
        "{events:#?}"
    );
}

#[test]
fn hostile_event_content_is_text_in_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let (db, trace) = received(dir.path(), "protobuf");
    // A local tool whose command and output are hostile, placed by the Bash call's id.
    let (child, addr, rest) = receiver(&db);
    let command = "echo \u{1b}]0;pwned\u{7} <script>alert(1)</script> \u{202e}txt.exe";
    let input = serde_json::json!({ "command": command }).to_string();
    let hostile = one_log(
        "1796657269200000000",
        &[
            ("event.name", "tool_result"),
            ("tool_use_id", "toolu_01ScriptedBashCall000001"),
            ("tool_name", "Bash<img src=x onerror=alert(2)>"),
            ("tool_input", &input),
            ("api_key", "sk-live-secret-0000"),
            ("success", "true"),
        ],
    );
    let (status, _) = post(&addr, "/v1/logs", "application/json", &hostile);
    assert_eq!(status, 200);
    stop(child, rest);
    let show = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["show", &trace])
        .output()
        .unwrap();
    let show = String::from_utf8(show.stdout).unwrap();
    assert!(show.contains("ran Bash<img"), "{show}");
    assert!(
        !show.contains('\u{1b}') && !show.contains('\u{202e}') && !show.contains('\u{7}'),
        "{show}"
    );
    let export = |format: &str| export(&db, &trace, format);
    let html = export("html");
    assert!(
        !html.contains("<script>alert(1)") && !html.contains("<img src=x"),
        "raw markup in the handout"
    );
    assert!(html.contains("&lt;script&gt;alert(1)"));
    let md = export("md");
    assert!(
        !md.contains("<script>alert(1)"),
        "raw markup in the Markdown"
    );
    // The secret the event carried is not kept.
    let log = export("json");
    assert!(!log.contains("sk-live-secret-0000") && log.contains("[redacted]"));
}

#[test]
fn a_hop_log_carries_the_agents_own_events_into_another_database() {
    let dir = tempfile::tempdir().unwrap();
    let (db, trace) = received(dir.path(), "protobuf");
    let log = dir.path().join("trace.json");
    let out = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["export", &trace, "--format", "json", "-o"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let other = dir.path().join("other.db");
    let out = Command::new(TRACER)
        .arg("--db")
        .arg(&other)
        .arg("import")
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = placed(&db, &trace);
    let after = placed(&other, &trace);
    let seen = |events: &[Value]| -> Vec<(String, String, Value)> {
        events
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_string(),
                    e["rule"].as_str().unwrap().to_string(),
                    e["after_message"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(seen(&after), seen(&before));
}

#[test]
fn a_receiver_beyond_loopback_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(TRACER)
        .arg("--db")
        .arg(dir.path().join("t.db"))
        .args([
            "proxy",
            "--route",
            "model=127.0.0.1:0=http://127.0.0.1:9",
            "--otlp-listen",
            "0.0.0.0:0",
        ])
        .env("RUST_LOG", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("receiving agents' own telemetry"))
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("warning: not a loopback address"), "{line}");
}
