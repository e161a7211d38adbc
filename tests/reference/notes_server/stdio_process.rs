//! The real `notes-server --stdio` process: newline-delimited JSON-RPC, both eras, logs on stderr.

use super::support::modern_body;
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    dir: tempfile::TempDir,
}

impl StdioServer {
    fn start(extra: &[&str]) -> StdioServer {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("nested/notes.txt");
        let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
            .arg("--stdio")
            .arg("--file")
            .arg(&file)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        StdioServer {
            child,
            stdin,
            stdout,
            dir,
        }
    }

    fn notes(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("nested/notes.txt")).unwrap()
    }

    async fn send_raw(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            self.stdout.read_line(&mut line),
        );
        read.await.unwrap().unwrap();
        assert!(line.ends_with('\n'), "one message per line: {line:?}");
        serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("stdout is not JSON-RPC ({error}): {line}"))
    }

    async fn ask(&mut self, message: &Value) -> Value {
        self.send_raw(&message.to_string()).await;
        self.receive().await
    }

    /// Closes stdin, waits for the exit and returns stderr.
    async fn finish(self) -> String {
        drop(self.stdin);
        let output = self.child.wait_with_output().await.unwrap();
        assert!(output.status.success(), "exit status {:?}", output.status);
        String::from_utf8(output.stderr).unwrap()
    }
}

#[tokio::test]
async fn modern_requests_over_stdio() {
    let mut server = StdioServer::start(&[]);
    let discover = server
        .ask(&modern_body(1, "server/discover", json!({})))
        .await;
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    let list = server.ask(&modern_body(2, "tools/list", json!({}))).await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 5);
    let call = modern_body(
        3,
        "tools/call",
        json!({"name": "append", "arguments": {"content": "buy milk"}}),
    );
    let reply = server.ask(&call).await;
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(server.notes(), "buy milk\n");
    let read = server
        .ask(&modern_body(4, "tools/call", json!({"name": "read"})))
        .await;
    assert_eq!(read["result"]["content"][0]["text"], "buy milk\n");
    let missing = server
        .ask(&modern_body(
            5,
            "tools/call",
            json!({"name": "update", "arguments": {"search": "x"}}),
        ))
        .await;
    assert_eq!(missing["result"]["isError"], true);
    let unknown = server
        .ask(&modern_body(6, "tools/call", json!({"name": "rm"})))
        .await;
    assert_eq!(
        unknown["error"],
        json!({"code": -32602, "message": "Unknown tool: rm"})
    );
    let mut old = modern_body(7, "tools/list", json!({}));
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    assert_eq!(server.ask(&old).await["error"]["code"], -32022);
    let stderr = server.finish().await;
    assert!(
        stderr.contains("notes-server on stdio"),
        "logs go to stderr: {stderr}"
    );
}

#[tokio::test]
async fn legacy_session_over_stdio() {
    let mut server = StdioServer::start(&[]);
    let no_handshake = server
        .ask(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(no_handshake["error"]["code"], -32602);
    let init = server
        .ask(&super::support::initialize_body("2025-06-18"))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    server
        .send_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let ping = server
        .ask(&json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
        .await;
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    for (id, tool, arguments) in [
        (2, "write", json!({"content": "a\nb"})),
        (3, "append", json!({"content": "c"})),
        (4, "update", json!({"search": "b", "replace": "B"})),
    ] {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        let reply = server.ask(&call).await;
        assert_eq!(reply["id"], id);
        assert_eq!(reply["result"]["isError"], false, "{reply}");
    }
    assert_eq!(server.notes(), "a\nB\nc\n");
    let clear =
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "clear"}});
    server.ask(&clear).await;
    assert_eq!(server.notes(), "");
    let unknown = server
        .ask(&json!({"jsonrpc": "2.0", "id": 6, "method": "resources/list"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32601);
    server.finish().await;
}

#[tokio::test]
async fn bad_lines_get_errors_and_the_server_keeps_going() {
    let mut server = StdioServer::start(&[]);
    server.send_raw("{not json").await;
    let parse = server.receive().await;
    assert_eq!(parse["error"]["code"], -32700);
    assert!(parse.get("id").is_none());
    server.send_raw(r#"{"jsonrpc":"2.0","id":9}"#).await;
    let invalid = server.receive().await;
    assert_eq!(
        (invalid["error"]["code"].clone(), invalid["id"].clone()),
        (json!(-32600), json!(9))
    );
    server.send_raw("").await;
    server
        .send_raw(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(1024 * 1024)
        ))
        .await;
    let too_long = server.receive().await;
    assert_eq!(too_long["error"]["code"], -32600);
    assert!(
        too_long["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than")
    );
    let still_alive = server.ask(&modern_body(2, "tools/list", json!({}))).await;
    assert_eq!(still_alive["id"], 2);
    server.finish().await;
}

#[tokio::test]
async fn the_binary_explains_its_flags() {
    let output = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .arg("--help")
        .output()
        .await
        .unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    for flag in ["--listen", "--file", "--max-bytes", "--sse", "--stdio"] {
        assert!(help.contains(flag), "{flag} in {help}");
    }
    let refused = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .args(["--stdio", "--sse"])
        .output()
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
}
