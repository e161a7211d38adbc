//! Modern (2026-07-28) stateless MCP over HTTP: discover, tools, and the envelope and header checks.

use super::support::{MODERN, TestServer, modern_body};
use serde_json::json;

#[tokio::test]
async fn discover_describes_the_server_statelessly() {
    let server = TestServer::start().await;
    let reply = server.modern(1, "server/discover", json!({})).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.header("mcp-session-id"), None);
    let result = &reply.json()["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    assert!(result["capabilities"]["tools"].is_object());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "notes-server"
    );
    assert!(result["ttlMs"].as_u64().unwrap() > 0);
    assert_eq!(result["cacheScope"], "public");
}

#[tokio::test]
async fn tools_list_has_five_tools_with_cache_hints() {
    let server = TestServer::start().await;
    let reply = server.modern(2, "tools/list", json!({})).await;
    let result = &reply.json()["result"];
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "write", "append", "update", "clear"]);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].is_u64());
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    for tool in result["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{tool}");
        assert!(tool["description"].as_str().unwrap().len() > 20, "{tool}");
    }
}

#[tokio::test]
async fn the_article_append_and_every_other_tool_change_the_file() {
    let server = TestServer::start().await;
    let reply = server.call("append", json!({"content": "buy milk"})).await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["id"], 7);
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(body["result"]["isError"], false);
    assert_eq!(server.notes(), "buy milk\n");

    server.call("append", json!({"content": "buy eggs"})).await;
    assert_eq!(
        server.call("read", json!({})).await.tool_text(),
        "buy milk\nbuy eggs\n"
    );
    let updated = server
        .call("update", json!({"search": "buy", "replace": "get"}))
        .await;
    assert_eq!(
        updated.tool_text(),
        "Replaced 2 occurrences of \"buy\" with \"get\"."
    );
    assert_eq!(server.notes(), "get milk\nget eggs\n");
    let written = server
        .call("write", json!({"content": "fresh start"}))
        .await;
    assert!(!written.is_tool_error(), "{}", written.text());
    assert_eq!(server.notes(), "fresh start");
    server.call("clear", json!({})).await;
    assert_eq!(server.notes(), "");
    assert_eq!(
        server.call("read", json!({})).await.tool_text(),
        "The notes file is empty."
    );
}

#[tokio::test]
async fn bad_arguments_are_tool_errors_for_the_model() {
    let server = TestServer::start().await;
    let cases = [
        ("append", json!({}), "Param (content) is required"),
        (
            "append",
            json!({"content": null}),
            "Param (content) is required",
        ),
        (
            "write",
            json!({"content": 42}),
            "Param (content) must be a string, got a number",
        ),
        (
            "update",
            json!({"search": "x"}),
            "Param (replace) is required",
        ),
        (
            "read",
            json!({"path": "/etc/passwd"}),
            "Unknown param (path): read takes no params",
        ),
        (
            "append",
            json!({"content": ""}),
            "Param (content) is empty; there is nothing to append",
        ),
        (
            "update",
            json!({"search": "", "replace": "y"}),
            "Param (search) must not be empty",
        ),
    ];
    for (tool, arguments, message) in cases {
        let reply = server.call(tool, arguments.clone()).await;
        assert_eq!(reply.status, 200);
        assert!(
            reply.is_tool_error(),
            "{tool} {arguments}: {}",
            reply.text()
        );
        assert_eq!(reply.tool_text(), message, "{tool} {arguments}");
    }
    let missing = server
        .call("update", json!({"search": "absent", "replace": "y"}))
        .await;
    assert!(missing.is_tool_error());
    assert!(
        missing.tool_text().contains("not found"),
        "{}",
        missing.tool_text()
    );
    assert_eq!(server.notes(), "");
}

#[tokio::test]
async fn unknown_tool_is_a_protocol_error() {
    let server = TestServer::start().await;
    let reply = server.call("delete_everything", json!({})).await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json()["error"],
        json!({"code": -32602, "message": "Unknown tool: delete_everything"})
    );
    assert_eq!(reply.json()["id"], 7);
    let no_name = server
        .modern(8, "tools/call", json!({"arguments": {}}))
        .await;
    assert_eq!(no_name.error_code(), -32602);
    let bad_args = server.call("append", json!(["buy milk"])).await;
    assert_eq!(bad_args.error_code(), -32602);
}

#[tokio::test]
async fn missing_required_meta_is_400_invalid_params() {
    let server = TestServer::start().await;
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/list"),
    ];
    let no_meta = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let reply = server.post(&headers, &no_meta).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.error_code(), -32602);
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion")
    );
    assert_eq!(reply.json()["id"], 1);

    let mut no_capabilities = modern_body(2, "tools/list", json!({}));
    no_capabilities["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let reply = server.post(&headers, &no_capabilities).await;
    assert_eq!((reply.status, reply.error_code()), (400, -32602));
    assert!(reply.text().contains("clientCapabilities"));
}

#[tokio::test]
async fn unsupported_version_is_400_with_the_supported_list() {
    let server = TestServer::start().await;
    let mut body = modern_body(1, "tools/list", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let reply = server
        .post(
            &[
                ("MCP-Protocol-Version", "1900-01-01"),
                ("Mcp-Method", "tools/list"),
            ],
            &body,
        )
        .await;
    assert_eq!(reply.status, 400);
    let error = &reply.json()["error"];
    assert_eq!(error["code"], -32022);
    assert_eq!(error["data"]["requested"], "1900-01-01");
    let supported = error["data"]["supported"].as_array().unwrap();
    assert_eq!(supported[0], MODERN);
    assert!(supported.contains(&json!("2025-11-25")));

    let header_only = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let reply = server
        .post(&[("MCP-Protocol-Version", "2099-01-01")], &header_only)
        .await;
    assert_eq!((reply.status, reply.error_code()), (400, -32022));
}

#[tokio::test]
async fn headers_must_mirror_the_body() {
    let server = TestServer::start().await;
    let body = modern_body(3, "tools/call", json!({"name": "read", "arguments": {}}));
    let cases: [(&[(&str, &str)], &str); 5] = [
        (
            &[("Mcp-Method", "tools/call"), ("Mcp-Name", "read")],
            "MCP-Protocol-Version header is missing",
        ),
        (
            &[("MCP-Protocol-Version", MODERN), ("Mcp-Name", "read")],
            "Mcp-Method header is missing",
        ),
        (
            &[
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/list"),
                ("Mcp-Name", "read"),
            ],
            "Mcp-Method header value 'tools/list' does not match body value 'tools/call'",
        ),
        (
            &[
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/call"),
            ],
            "Mcp-Name header is missing",
        ),
        (
            &[
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "foo"),
            ],
            "Mcp-Name header value 'foo' does not match body value 'read'",
        ),
    ];
    for (headers, message) in cases {
        let reply = server.post(headers, &body).await;
        assert_eq!(reply.status, 400, "{headers:?}");
        assert_eq!(reply.error_code(), -32020, "{headers:?}");
        assert!(
            reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains(message),
            "{}",
            reply.text()
        );
    }
    let mismatched_version = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "read"),
    ];
    let reply = server.post(&mismatched_version, &body).await;
    assert_eq!((reply.status, reply.error_code()), (400, -32020));
}

#[tokio::test]
async fn base64_encoded_mcp_name_is_decoded_before_comparing() {
    let server = TestServer::start().await;
    let body = modern_body(4, "tools/call", json!({"name": "read", "arguments": {}}));
    let encoded = format!("=?base64?{}?=", "cmVhZA=="); // "read"
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("mcp-name", encoded.as_str()),
    ];
    let reply = server.post(&headers, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(!reply.is_tool_error());
}

#[tokio::test]
async fn unknown_and_removed_methods_are_404_method_not_found() {
    let server = TestServer::start().await;
    for method in ["resources/list", "ping", "no/such"] {
        let reply = server.modern(5, method, json!({})).await;
        assert_eq!(reply.status, 404, "{method}");
        assert_eq!(reply.error_code(), -32601, "{method}");
        assert_eq!(
            reply.json()["error"]["message"],
            format!("Method not found: {method}")
        );
    }
}

#[tokio::test]
async fn notifications_are_accepted_with_202_and_no_body() {
    let server = TestServer::start().await;
    let mut body = modern_body(0, "notifications/cancelled", json!({"requestId": 1}));
    body.as_object_mut().unwrap().remove("id");
    let reply = server
        .post(
            &[
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "notifications/cancelled"),
            ],
            &body,
        )
        .await;
    assert_eq!(reply.status, 202);
    assert!(reply.body.is_empty());
}

#[tokio::test]
async fn traceparent_in_meta_is_accepted() {
    let server = TestServer::start().await;
    let mut body = modern_body(
        9,
        "tools/call",
        json!({"name": "append", "arguments": {"content": "x"}}),
    );
    body["params"]["_meta"]["traceparent"] =
        json!("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "append"),
    ];
    let reply = server.post(&headers, &body).await;
    assert_eq!(reply.status, 200);
    assert_eq!(server.notes(), "x\n");
}

#[tokio::test]
async fn sse_mode_answers_requests_as_one_event() {
    let server = TestServer::start_with(|config| config.sse = true).await;
    let reply = server.modern(1, "tools/list", json!({})).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(reply.header("cache-control"), Some("no-cache"));
    let text = reply.text();
    let data = text
        .strip_prefix("event: message\ndata: ")
        .and_then(|rest| rest.strip_suffix("\n\n"))
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(body["result"]["tools"].as_array().unwrap().len(), 5);

    let body = modern_body(2, "tools/list", json!({}));
    let headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/list"),
        ("Accept", "application/json"),
    ];
    let json_only = server.post(&headers, &body).await;
    assert_eq!(json_only.header("content-type"), Some("application/json"));
    let error = server.modern(3, "nope", json!({})).await;
    assert_eq!(error.header("content-type"), Some("application/json"));
}
