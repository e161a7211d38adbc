//! Safety: the Origin rule, the 1 MiB body cap, the notes-file size cap, and serialized writes.

use super::support::{TestServer, modern_body, read_reply, send};
use serde_json::json;
use tokio::io::AsyncWriteExt;

const MIB: usize = 1024 * 1024;

#[tokio::test]
async fn a_foreign_origin_is_403_and_localhost_origins_pass() {
    let server = TestServer::start().await;
    let body = modern_body(1, "tools/list", json!({}));
    let headers = |origin| {
        [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
            ("Origin", origin),
        ]
    };
    for origin in [
        "http://evil.example",
        "null",
        "http://localhost.evil.example:8080",
    ] {
        let reply = server.post(&headers(origin), &body).await;
        assert_eq!(reply.status, 403, "{origin}");
        assert!(reply.text().contains(origin), "{origin}");
        assert!(reply.json().get("id").is_none());
    }
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1:8080",
        "http://[::1]:6274",
    ] {
        assert_eq!(
            server.post(&headers(origin), &body).await.status,
            200,
            "{origin}"
        );
    }
    let refused = send(
        server.addr,
        "DELETE",
        "/mcp",
        &[("Origin", "http://evil.example")],
        b"",
    )
    .await;
    assert_eq!(refused.status, 403);
}

#[tokio::test]
async fn a_declared_body_over_1_mib_is_413_before_reading_it() {
    let server = TestServer::start().await;
    let length = (MIB + 1).to_string();
    let reply = send(
        server.addr,
        "POST",
        "/mcp",
        &[("Content-Length", length.as_str())],
        b"{",
    )
    .await;
    assert_eq!(reply.status, 413);
    assert!(reply.text().contains("1048576"));
}

#[tokio::test]
async fn a_chunked_body_over_1_mib_is_413() {
    let server = TestServer::start().await;
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..(MIB / chunk.len() + 1) {
        let framed = [
            format!("{:x}\r\n", chunk.len()).into_bytes(),
            chunk.clone(),
            b"\r\n".to_vec(),
        ]
        .concat();
        if stream.write_all(&framed).await.is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.status, 413);
}

#[tokio::test]
async fn a_body_just_under_1_mib_is_served() {
    let server = TestServer::start().await;
    let content = "x".repeat(MIB - 400);
    let reply = server.call("write", json!({"content": content})).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(server.notes().len(), MIB - 400);
}

#[tokio::test]
async fn growth_past_max_bytes_is_a_tool_error_and_changes_nothing() {
    let server = TestServer::start_with(|config| config.max_file_bytes = 20).await;
    server
        .call("append", json!({"content": "0123456789"}))
        .await;
    let reply = server
        .call("append", json!({"content": "0123456789"}))
        .await;
    assert!(reply.is_tool_error());
    assert!(
        reply.tool_text().contains("limit of 20 bytes"),
        "{}",
        reply.tool_text()
    );
    assert_eq!(server.notes(), "0123456789\n");
    let write = server
        .call("write", json!({"content": "x".repeat(21)}))
        .await;
    assert!(write.is_tool_error());
    assert_eq!(server.notes(), "0123456789\n");
}

#[tokio::test]
async fn a_hundred_parallel_appends_leave_a_hundred_lines() {
    let server = TestServer::start().await;
    let calls = (0..100).map(|n| {
        let server = &server;
        async move {
            server
                .call("append", json!({"content": format!("note {n}")}))
                .await
        }
    });
    let replies = futures_util::future::join_all(calls).await;
    assert!(
        replies
            .iter()
            .all(|reply| reply.status == 200 && !reply.is_tool_error())
    );
    let notes = server.notes();
    let mut lines: Vec<&str> = notes.lines().collect();
    assert_eq!(lines.len(), 100);
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), 100, "every note once");
    let folder: Vec<_> = std::fs::read_dir(server.file.parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(folder.len(), 1, "no temp files left next to the notes");
}
