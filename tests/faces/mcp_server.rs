//! `tracer mcp` without any peer: a stdio session of raw JSON-RPC lines against a database of the
//! sample traces (both eras, every tool, tool errors and -32602), the database bytes unchanged
//! afterwards, `diff_traces` answering what `tracer diff --json` says, and a missing database
//! refused without being created.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::sample_db::{BUY_MILK, NEWEST, TRACER, sample_db};

/// Sends each request as one line on stdin and returns the answer lines as JSON.
pub fn stdio_session(db: &std::path::Path, requests: &[Value]) -> Vec<Value> {
    let mut child = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(["mcp", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for request in requests {
        writeln!(stdin, "{request}").unwrap();
    }
    drop(stdin);
    let answers: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
        .collect();
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "tracer mcp --stdio exits 0 at the end of its input"
    );
    answers
}

fn call(id: u64, name: &str, arguments: Value, modern: bool) -> Value {
    let mut params = json!({"name": name, "arguments": arguments});
    if modern {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The database file and its WAL (a missing WAL reads as empty: a reader of a WAL database may
/// create the empty `-wal` and `-shm` index files SQLite needs, which is not a write).
fn files_of(db: &std::path::Path) -> (Vec<u8>, Vec<u8>) {
    let wal = db.with_extension("db-wal");
    (
        std::fs::read(db).unwrap(),
        std::fs::read(wal).unwrap_or_default(),
    )
}

#[test]
fn every_tool_answers_in_both_eras_and_the_database_is_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let before = files_of(&db);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let answers = stdio_session(
        &db,
        &[
            call(1, "list_traces", json!({}), true),
            initialize,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            call(
                3,
                "get_trace",
                json!({"id": &BUY_MILK[..5], "detail": "messages"}),
                false,
            ),
            call(
                4,
                "get_message",
                json!({"trace": BUY_MILK, "number": 5}),
                true,
            ),
            call(5, "search", json!({"text": "plumber"}), false),
            call(6, "tool_stats", json!({"since": "-100000d"}), false),
            call(7, "get_trace", json!({"id": "3f9z"}), false),
            call(8, "list_traces", json!({"limit": "many"}), false),
            call(9, "drop_table", json!({}), false),
        ],
    );
    assert_eq!(answers.len(), 10, "{answers:?}");
    let listing = &answers[0]["result"];
    assert_eq!(
        listing["resultType"], "complete",
        "modern answers are complete"
    );
    assert_eq!(listing["structuredContent"]["traces"][0]["id"], NEWEST);
    assert!(text(&answers[0]).contains("Next: get_trace"));
    let init = &answers[1]["result"];
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .contains("never writes to the database")
    );
    let names: Vec<&str> = answers[2]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "list_traces",
            "get_trace",
            "get_message",
            "search",
            "tool_stats",
            "diff_traces"
        ]
    );
    let trace = text(&answers[3]);
    assert!(
        trace.contains(" 6 → agent → notes  POST /mcp  tools/call append"),
        "{trace}"
    );
    assert!(
        trace.contains("The model is stateless"),
        "detail=messages explains: {trace}"
    );
    let message = &answers[4]["result"]["structuredContent"];
    assert_eq!(message["from"], "ollama");
    assert!(message["body"].as_str().unwrap().contains("\"tool_calls\""));
    assert!(
        text(&answers[5]).contains("3b30683a"),
        "{}",
        text(&answers[5])
    );
    assert!(
        text(&answers[6]).starts_with("7 tools over 6 traces"),
        "{}",
        text(&answers[6])
    );
    // What each definition weighs in context: the notes server's five tools, offered in the
    // samples' twelve model requests, on a model the price table does not know.
    let stats = text(&answers[6]);
    assert!(
        stats.contains("notes (mcp): 5 tools, asked for 8 times, definitions ≈ 2,726 tokens over 12 requests (cost unknown)"),
        "{stats}"
    );
    assert!(
        stats.contains("clear: 0 calls, 0 tool errors, 0 protocol errors, p50 -, p95 -, no model asked for it, definition ≈ 403 tokens over 12 requests (cost unknown)"),
        "{stats}"
    );
    let stats = &answers[6]["result"]["structuredContent"];
    assert_eq!(stats["servers"][0]["server"], "notes");
    assert_eq!(stats["servers"][0]["context"]["approx_usd"], Value::Null);
    let clear = stats["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "clear")
        .unwrap();
    assert_eq!(clear["server"], "notes");
    assert_eq!(clear["context"]["requests"], 12);
    assert_eq!(clear["context"]["unpriced_requests"], 12);
    assert_eq!(answers[7]["result"]["isError"], true);
    assert_eq!(
        text(&answers[7]),
        "No trace starts with 3f9z; list_traces shows the ids"
    );
    assert_eq!(answers[8]["result"]["isError"], true);
    assert!(text(&answers[8]).contains("limit of list_traces must be a whole number"));
    assert_eq!(answers[9]["error"]["code"], -32602);
    assert_eq!(answers[9]["error"]["message"], "Unknown tool: drop_table");
    assert!(
        files_of(&db) == before,
        "the database and its WAL are byte for byte the same"
    );
}

#[test]
fn diff_traces_says_what_tracer_diff_says() {
    const PLUMBER: &str = "3b30683ac3038d57580bbf907b1d17ab";
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let cli = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["diff", BUY_MILK, PLUMBER, "--json"])
        .output()
        .unwrap();
    assert!(cli.status.success(), "{cli:?}");
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    let answers = stdio_session(
        &db,
        &[
            call(
                1,
                "diff_traces",
                json!({"a": &BUY_MILK[..6], "b": "3b30"}),
                true,
            ),
            call(2, "diff_traces", json!({"a": BUY_MILK, "b": "3f9z"}), true),
            call(3, "diff_traces", json!({"a": "1", "b": BUY_MILK}), true),
            call(4, "diff_traces", json!({"a": BUY_MILK}), true),
            call(
                5,
                "diff_traces",
                json!({"a": BUY_MILK, "b": BUY_MILK, "c": 1}),
                true,
            ),
            call(
                6,
                "diff_traces",
                json!({"a": BUY_MILK, "b": &BUY_MILK[..8]}),
                true,
            ),
        ],
    );
    assert_eq!(answers.len(), 6, "{answers:?}");
    let diff = &answers[0]["result"];
    assert_eq!(diff["isError"], false);
    assert_eq!(
        diff["structuredContent"], cli,
        "structuredContent is tracer diff --json"
    );
    let lines: Vec<&str> = text(&answers[0]).lines().collect();
    assert_eq!(lines[0], cli["summary"].as_str().unwrap());
    assert!(
        lines[0]
            .starts_with("different tools (A: append; B: append, append); 2 steps in A, 3 in B"),
        "{lines:?}"
    );
    assert!(lines[1].starts_with(&format!(
        "A {BUY_MILK} \"Add buy milk to my notes\": 2 steps"
    )));
    assert!(lines[2].starts_with(&format!("B {PLUMBER} \"Add call the plumber")));
    assert_eq!(
        lines[3],
        "step 1 differs: A append {\"content\":\"buy milk\"} → ok | B append \
         {\"text\":\"call the plumber\"} → tool error: \"Unknown param (text): append takes \
         only content\""
    );
    assert_eq!(
        lines[5],
        "step 3 differs: A (no such step) | B says \"I've added \"call the plumber\" to your notes.\""
    );
    assert!(lines[6].starts_with("reply differs: "), "{lines:?}");
    assert_eq!(
        lines[7],
        format!(
            "Next: get_trace with id {BUY_MILK} (A) or {PLUMBER} (B) for the numbered messages of \
             a run."
        )
    );
    for (answer, message) in [
        (
            &answers[1],
            "No trace starts with 3f9z; list_traces shows the ids".to_owned(),
        ),
        (
            &answers[2],
            "More than one trace starts with 1; give more characters of the id".to_owned(),
        ),
        (
            &answers[3],
            "Argument (b) is required by diff_traces".to_owned(),
        ),
        (
            &answers[4],
            "Unknown argument (c): diff_traces takes only a, b".to_owned(),
        ),
    ] {
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert_eq!(text(answer), message);
    }
    let same = &answers[5]["result"];
    assert_eq!(same["structuredContent"]["same_tool_calls"], true);
    assert_eq!(
        text(&answers[5]).lines().next(),
        Some("same tools and arguments; the same reply; about as long")
    );
    assert!(text(&answers[5]).contains("step 1 same calls: A append"));
}

#[test]
fn a_missing_database_is_refused_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nothing-here.db");
    let output = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["mcp", "--stdio"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("nothing-here.db") && stderr.contains("no database at"),
        "{stderr}"
    );
    assert!(!db.exists());
}
