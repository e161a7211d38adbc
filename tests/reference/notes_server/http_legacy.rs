//! Legacy (2025-03-26 … 2025-11-25) MCP over HTTP: initialize, sessions, DELETE, batches.

use super::support::{TestServer, initialize_body, send};
use serde_json::json;
use std::time::Duration;

fn request(id: i64, method: &str, params: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn initialize_negotiates_and_mints_a_session() {
    let server = TestServer::start().await;
    let reply = server.post(&[], &initialize_body("2025-06-18")).await;
    assert_eq!(reply.status, 200);
    let session = reply.header("mcp-session-id").unwrap();
    assert_eq!(session.len(), 32);
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));
    let result = &reply.json()["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "notes-server");
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["instructions"].as_str().unwrap().contains("append"));
    assert!(result.get("resultType").is_none());

    let unknown = server.post(&[], &initialize_body("1.0.0")).await;
    assert_eq!(unknown.json()["result"]["protocolVersion"], "2025-11-25");
    let modern_asked = server.post(&[], &initialize_body("2026-07-28")).await;
    assert_eq!(
        modern_asked.json()["result"]["protocolVersion"],
        "2025-11-25"
    );
    let bad = server
        .post(
            &[],
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        )
        .await;
    assert_eq!(bad.error_code(), -32602);
    assert_eq!(bad.header("mcp-session-id"), None);
}

#[tokio::test]
async fn a_whole_legacy_session_works() {
    let server = TestServer::start().await;
    let session = server.initialize("2025-11-25").await;
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = server.post(&headers, &initialized).await;
    assert_eq!(reply.status, 202);
    assert!(reply.body.is_empty());

    let ping = server.post(&headers, &request(2, "ping", json!({}))).await;
    assert_eq!(
        ping.json(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );

    let list = server
        .post(&headers, &request(3, "tools/list", json!({})))
        .await;
    let result = &list.json()["result"];
    assert_eq!(result["tools"].as_array().unwrap().len(), 5);
    assert!(result.get("resultType").is_none() && result.get("ttlMs").is_none());

    let call = request(
        4,
        "tools/call",
        json!({"name": "append", "arguments": {"content": "buy milk"}}),
    );
    let reply = server.post(&headers, &call).await;
    assert_eq!(reply.json()["result"]["isError"], false);
    assert!(reply.json()["result"].get("resultType").is_none());
    assert_eq!(server.notes(), "buy milk\n");

    let unknown_tool = request(5, "tools/call", json!({"name": "nope"}));
    assert_eq!(
        server.post(&headers, &unknown_tool).await.error_code(),
        -32602
    );
    let tool_error = request(6, "tools/call", json!({"name": "write", "arguments": {}}));
    let reply = server.post(&headers, &tool_error).await;
    assert_eq!(reply.tool_text(), "Param (content) is required");

    let unknown_method = server
        .post(&headers, &request(7, "prompts/list", json!({})))
        .await;
    assert_eq!(
        (unknown_method.status, unknown_method.error_code()),
        (200, -32601)
    );
}

#[tokio::test]
async fn delete_ends_the_session_and_unknown_sessions_get_404() {
    let server = TestServer::start().await;
    let session = server.initialize("2025-11-25").await;
    let headers = [("Mcp-Session-Id", session.as_str())];
    let deleted = send(server.addr, "DELETE", "/mcp", &headers, b"").await;
    assert_eq!(deleted.status, 200);
    let after = server
        .post(&headers, &request(2, "tools/list", json!({})))
        .await;
    assert_eq!(after.status, 404);
    assert_eq!(after.json()["id"], 2);
    assert!(after.text().contains("Session not found"));
    let again = send(server.addr, "DELETE", "/mcp", &headers, b"").await;
    assert_eq!(again.status, 404);
    let made_up = [("Mcp-Session-Id", "0123456789abcdef0123456789abcdef")];
    assert_eq!(
        server
            .post(&made_up, &request(3, "ping", json!({})))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn expired_sessions_get_404() {
    let server =
        TestServer::start_with(|config| config.session_idle_timeout = Duration::from_millis(500))
            .await;
    let session = server.initialize("2025-11-25").await;
    let headers = [("Mcp-Session-Id", session.as_str())];
    assert_eq!(
        server
            .post(&headers, &request(2, "ping", json!({})))
            .await
            .status,
        200
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        server
            .post(&headers, &request(3, "ping", json!({})))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn a_legacy_request_without_a_session_is_400() {
    let server = TestServer::start().await;
    let reply = server.post(&[], &request(1, "tools/list", json!({}))).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.error_code(), -32600);
    assert!(reply.text().contains("Mcp-Session-Id"));
    let with_old_version = server
        .post(
            &[("MCP-Protocol-Version", "2025-06-18")],
            &request(2, "ping", json!({})),
        )
        .await;
    assert_eq!(with_old_version.status, 400);
}

#[tokio::test]
async fn an_unsupported_version_header_in_a_session_is_400() {
    let server = TestServer::start().await;
    let session = server.initialize("2025-11-25").await;
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "1999-01-01"),
    ];
    let reply = server
        .post(&headers, &request(2, "tools/list", json!({})))
        .await;
    assert_eq!(reply.status, 400);
    assert!(reply.text().contains("1999-01-01"));
}

#[tokio::test]
async fn batches_work_only_in_a_2025_03_26_session() {
    let server = TestServer::start().await;
    let session = server.initialize("2025-03-26").await;
    let headers = [("Mcp-Session-Id", session.as_str())];
    let batch = json!([
        request(1, "ping", json!({})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        request(2, "tools/call", json!({"name": "append", "arguments": {"content": "a"}})),
        {"not": "a message"},
    ]);
    let reply = server.post(&headers, &batch).await;
    assert_eq!(reply.status, 200);
    let answers = reply.json();
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[1]["result"]["isError"], false);
    assert_eq!(answers[2]["error"]["code"], -32600);
    assert_eq!(server.notes(), "a\n");
    let only_notifications = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    assert_eq!(server.post(&headers, &only_notifications).await.status, 202);

    let newer = server.initialize("2025-11-25").await;
    let reply = server
        .post(
            &[("Mcp-Session-Id", newer.as_str())],
            &json!([request(1, "ping", json!({}))]),
        )
        .await;
    assert_eq!((reply.status, reply.error_code()), (400, -32600));
    assert!(reply.text().contains("2025-03-26"));
}

#[tokio::test]
async fn sse_mode_answers_legacy_requests_as_events_too() {
    let server = TestServer::start_with(|config| config.sse = true).await;
    let reply = server
        .post(
            &[("Accept", "application/json, text/event-stream")],
            &initialize_body("2025-11-25"),
        )
        .await;
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert!(reply.header("mcp-session-id").is_some());
    assert!(
        reply
            .text()
            .starts_with("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":")
    );
}

#[tokio::test]
async fn a_modern_request_is_served_statelessly_even_with_a_session_id() {
    let server = TestServer::start().await;
    let session = server.initialize("2025-11-25").await;
    let body = super::support::modern_body(2, "tools/list", json!({}));
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    let reply = server.post(&headers, &body).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["resultType"], "complete");
}
