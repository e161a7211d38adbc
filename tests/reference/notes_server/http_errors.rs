//! Protocol errors at the JSON-RPC level: malformed JSON, not-a-request, wrong paths and methods.

use super::support::{TestServer, send};
use serde_json::json;

#[tokio::test]
async fn malformed_json_is_400_parse_error_without_id() {
    let server = TestServer::start().await;
    let reply = send(
        server.addr,
        "POST",
        "/mcp",
        &[],
        b"{\"jsonrpc\": \"2.0\", \"id\": 1,",
    )
    .await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let body = reply.json();
    assert_eq!(body["error"]["code"], -32700);
    assert!(body.get("id").is_none());
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error")
    );
}

#[tokio::test]
async fn json_that_is_not_a_request_is_400_invalid_request() {
    let server = TestServer::start().await;
    let cases = [
        (json!(42), None),
        (json!([]), None),
        (json!({"id": 5, "method": "tools/list"}), Some(json!(5))),
        (
            json!({"jsonrpc": "2.0", "id": 6, "method": 12}),
            Some(json!(6)),
        ),
        (json!({"jsonrpc": "2.0", "id": "x"}), Some(json!("x"))),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "tools/list"}),
            None,
        ),
    ];
    for (body, id) in cases {
        let reply = server.post(&[], &body).await;
        assert_eq!(reply.status, 400, "{body}");
        assert_eq!(reply.error_code(), -32600, "{body}");
        assert_eq!(reply.json().get("id").cloned(), id, "{body}");
    }
}

#[tokio::test]
async fn a_posted_response_without_a_session_is_refused() {
    let server = TestServer::start().await;
    let reply = server
        .post(&[], &json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
        .await;
    assert_eq!((reply.status, reply.error_code()), (400, -32600));
}

#[tokio::test]
async fn other_paths_are_404_and_other_methods_405() {
    let server = TestServer::start().await;
    let reply = send(server.addr, "POST", "/api", &[], b"{}").await;
    assert_eq!(reply.status, 404);
    assert!(reply.text().contains("POST /mcp"));
    for method in ["GET", "PUT", "DELETE"] {
        let reply = send(server.addr, method, "/mcp", &[], b"").await;
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("allow"), Some("POST, DELETE"));
        assert_eq!(reply.error_code(), -32600);
    }
}
