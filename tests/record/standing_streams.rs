//! A host's standing stream (`GET /mcp` held open) through the real proxy holds no trace open and
//! fails none; an MCP POST whose SSE answer carried the JSON-RPC response is complete although
//! the client hangs up right after reading it (as the MCP 1.x client does).

use std::convert::Infallible;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

type Chunks = futures_util::stream::BoxStream<'static, Result<Frame<Bytes>, Infallible>>;

/// An MCP server whose GET stream never ends and whose POST answers stay open after the
/// JSON-RPC response (the client must hang up).
async fn mcp_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = service_fn(|req: http::Request<hyper::body::Incoming>| async move {
                    let get = req.method() == http::Method::GET;
                    let body = req.into_body().collect().await.unwrap().to_bytes();
                    let id = serde_json::from_slice::<serde_json::Value>(&body)
                        .map(|v| v["id"].clone())
                        .unwrap_or_default();
                    let first = if get {
                        ": the server's messages come here\n\n".to_string()
                    } else {
                        let answer = serde_json::json!({"jsonrpc": "2.0", "id": id,
                            "result": {"content": [{"type": "text", "text": "555-0100"}], "isError": false}});
                        format!("event: message\ndata: {answer}\n\n")
                    };
                    let chunks: Chunks = Box::pin(futures_util::stream::unfold(
                        Some(first),
                        |next| async move {
                            match next {
                                Some(text) => Some((Ok(Frame::data(Bytes::from(text))), None)),
                                None => {
                                    tokio::time::sleep(Duration::from_secs(3600)).await;
                                    None
                                }
                            }
                        },
                    ));
                    let response = Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(StreamBody::new(chunks))
                        .unwrap();
                    Ok::<_, Infallible>(response)
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// Sends a request on a fresh connection and reads until `until` has come; returns the stream.
async fn send(port: u16, head: &str, body: &str, until: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let request = format!(
        "{head}\r\nhost: x\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(until) {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "closed before {until:?}");
        seen.extend_from_slice(&buf[..n]);
    }
    stream
}

fn tracer(db: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_standing_stream_holds_no_trace_open_and_answers_read_are_complete() {
    let upstream = mcp_server().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .args([
            "proxy",
            "--route",
            &format!("mcp=127.0.0.1:{port}=http://{upstream}"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let post = "POST /mcp HTTP/1.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream";
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    drop(send(port, post, init, "555-0100").await);
    let standing = send(
        port,
        "GET /mcp HTTP/1.1\r\naccept: text/event-stream",
        "",
        "come here",
    )
    .await;
    for id in 1..=2 {
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_phonenumber","arguments":{{"name":"Ann"}}}}}}"#
        );
        // Read the answer, then hang up on a stream the server keeps open.
        drop(send(port, post, &call, "555-0100").await);
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let open: serde_json::Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    for trace in open.as_array().unwrap() {
        assert_ne!(
            trace["status"], "in flight",
            "the stream holds nothing open: {open}"
        );
    }
    drop(standing);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(proxy.wait().unwrap().success());
    let hops: serde_json::Value =
        serde_json::from_str(&tracer(&db, &["ls", "--hops", "--json"])).unwrap();
    let calls: Vec<_> = hops
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["method"] == "POST")
        .collect();
    assert_eq!(calls.len(), 3, "{hops}");
    for call in calls {
        assert_eq!(
            call["state"], "complete",
            "answer read, then hung up: {hops}"
        );
    }
    let listed: serde_json::Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    let mut shown = String::new();
    for trace in listed.as_array().unwrap() {
        assert_eq!(trace["status"], "ok", "nothing failed: {listed}");
        shown.push_str(&tracer(&db, &["show", trace["id"].as_str().unwrap()]));
    }
    assert!(
        shown.contains("the host closed its standing stream"),
        "{shown}"
    );
    assert!(shown.contains("555-0100"), "the results are kept: {shown}");
}
