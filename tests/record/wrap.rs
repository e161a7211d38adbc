//! `tracer wrap` as a host runs it: bytes pass through untouched, every JSON-RPC message is
//! recorded, and crashes, garbage, EOF and SIGTERM are handled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tracer_store::Store;
use tracer_wire::hop::{HopState, Transport};

const FAKE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/stdio/fake_server.py"
);

fn wrapped(db: &Path, server_args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args([
            "--db",
            db.to_str().unwrap(),
            "wrap",
            "--name",
            "fake",
            "--",
            "python3",
            "-u",
            FAKE,
        ])
        .args(server_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn bare(server_args: &[&str]) -> Child {
    Command::new("python3")
        .args(["-u", FAKE])
        .args(server_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

const SESSION: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":"two","method":"ask"}"#,
    "\n",
);

/// Sent once the server has asked its question (a host answers after it is asked).
const ANSWER: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"q1","result":{"roots":[]}}"#,
    "\n",
    "this line is not json\n",
);

/// Plays a host: the session, then (after the server's question) the answer; returns
/// (stdout, stderr, exit code).
fn converse_as_host(mut child: Child) -> (String, String, Option<i32>) {
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(SESSION.as_bytes()).unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut out = String::new();
    while !out.contains("roots/list") {
        assert!(
            reader.read_line(&mut out).unwrap() > 0,
            "the server never asked: {out}"
        );
    }
    stdin.write_all(ANSWER.as_bytes()).unwrap();
    drop(stdin);
    reader.read_to_string(&mut out).unwrap();
    let output = child.wait_with_output().unwrap();
    (
        out,
        String::from_utf8(output.stderr).unwrap(),
        output.status.code(),
    )
}

async fn hops(db: &Path) -> Vec<tracer_store::hops::StoredHop> {
    Store::open(db).await.unwrap().all_hops().await.unwrap()
}

#[tokio::test]
async fn passes_through_byte_exact_and_records_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (plain_out, plain_err, plain_code) = converse_as_host(bare(&[]));
    let (out, err, code) = converse_as_host(wrapped(&db, &[]));
    assert_eq!(out, plain_out, "stdout is byte-exact");
    assert_eq!(err, plain_err, "stderr passes through");
    assert_eq!(code, plain_code);

    // The server's greeting races the host's first lines; everything else is causal.
    let mut hops = hops(&db).await;
    if let Some(greeting) = hops.iter().position(|h| h.start.path == "server→client") {
        let greeting = hops.remove(greeting);
        assert_eq!(greeting.start.method, "(invalid)");
        assert_eq!(
            greeting.end.request_body.bytes,
            b"fake server starting (not JSON-RPC)"
        );
    }
    let described: Vec<(String, String, HopState)> = hops
        .iter()
        .map(|h| (h.start.method.clone(), h.start.path.clone(), h.state))
        .collect();
    let expected = [
        ("initialize", "client→server"),
        ("notifications/initialized", "client→server"),
        ("ask", "client→server"),
        ("roots/list", "server→client"),
        ("(invalid)", "client→server"),
    ];
    assert_eq!(described.len(), expected.len(), "{described:?}");
    for ((method, path, state), (want_method, want_path)) in described.iter().zip(expected) {
        assert_eq!(
            (method.as_str(), path.as_str()),
            (want_method, want_path),
            "{described:?}"
        );
        assert_eq!(*state, HopState::Complete);
    }
    let initialize = &hops[0];
    assert_eq!(initialize.start.transport, Transport::Stdio);
    assert_eq!(initialize.start.route, "fake");
    assert_eq!(
        initialize.end.request_body.bytes,
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#
    );
    assert_eq!(
        String::from_utf8_lossy(&initialize.end.response_body.bytes),
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"method": "initialize"}}"#
    );
    let roots = &hops[3];
    assert_eq!(
        String::from_utf8_lossy(&roots.end.response_body.bytes),
        r#"{"jsonrpc":"2.0","id":"q1","result":{"roots":[]}}"#
    );
    let store = Store::open(&db).await.unwrap();
    assert_eq!(
        store.server_logs("fake").await.unwrap(),
        ["fake server log line"]
    );
}

#[tokio::test]
async fn a_crash_mid_call_is_recorded_and_its_exit_code_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let input = concat!(r#"{"jsonrpc":"2.0","id":7,"method":"crash"}"#, "\n");
    let child = wrapped(&db, &[]);
    let mut stdin = child.stdin.as_ref().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "the server's exit code is propagated"
    );
    let hops = hops(&db).await;
    let crash = hops.iter().find(|h| h.start.method == "crash").unwrap();
    assert_eq!(crash.state, HopState::Aborted);
    assert!(
        crash
            .end
            .error
            .as_deref()
            .unwrap()
            .contains("exited before answering")
    );
    let store = Store::open(&db).await.unwrap();
    assert!(
        store
            .server_logs("fake")
            .await
            .unwrap()
            .contains(&"crashing mid-call".to_string())
    );
}

#[tokio::test]
async fn sigterm_reaches_the_server_and_hops_are_written_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut child = wrapped(&db, &["--ignore-eof"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap(); // the greeting
    line.clear();
    reader.read_line(&mut line).unwrap();
    assert!(line.contains("tools/list"), "{line}");
    let signalled = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(
        signalled.elapsed() < Duration::from_secs(2),
        "the wrapper ended promptly"
    );
    assert_eq!(
        status.code(),
        Some(128 + 15),
        "the server died of SIGTERM: {status:?}"
    );
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    let hops = hops(&db).await;
    assert!(
        hops.iter()
            .any(|h| h.start.method == "tools/list" && h.state == HopState::Complete),
        "{hops:?}"
    );
}

#[test]
fn an_unusable_database_never_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_db = dir.path().join("plain.txt");
    std::fs::write(&not_a_db, "x".repeat(4096)).unwrap();
    let (out, err, code) = converse_as_host(wrapped(&not_a_db, &[]));
    let (plain_out, _, plain_code) = converse_as_host(bare(&[]));
    assert_eq!(out, plain_out);
    assert_eq!(code, plain_code);
    assert!(err.contains("not recording"), "{err}");
}
