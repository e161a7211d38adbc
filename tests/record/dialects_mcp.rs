//! MCP and agent-API fixtures (both MCP eras, JSON and SSE, notifications, batches, both kinds of
//! error), dialect detection, and hops in flight or failed.

use crate::dialect_hops as support;

use support::{JSON, SSE, hop};
use tracer_trace::{RecordedHop, explain_request, explain_response, explain_trace};
use tracer_wire::dialect::{self, Dialect, Integrity, JsonRpcKind, McpEra, Reading};
use tracer_wire::hop::{BodyCapture, HopState, Role};

fn mcp_hop(request: &[u8], content_type: &str, response: &[u8]) -> RecordedHop {
    hop(Role::Mcp, "/mcp", request, content_type, response)
}

#[test]
fn mcp_calls_results_and_the_two_kinds_of_error() {
    let call = mcp_hop(
        fixture!("mcp_tools_call_request.json"),
        SSE,
        fixture!("mcp_tools_call_result.sse"),
    );
    let reading = call.reading();
    assert_eq!(reading.dialect, Dialect::Mcp);
    let Reading::Mcp(request) = &reading.request.reading else {
        panic!("not MCP");
    };
    let message = request.request().expect("a request");
    assert_eq!(message.kind, JsonRpcKind::Request);
    assert_eq!(message.tool_name.as_deref(), Some("append"));
    assert_eq!(
        message.traceparent.as_deref(),
        Some("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
    );
    assert_eq!(request.era, Some(McpEra::Modern));
    assert_eq!(
        explain_request(&call, &reading, None).summary,
        "tools/call append {\"content\":\"buy milk\"}"
    );
    let response = reading.response.as_ref().expect("response");
    let Reading::Mcp(sse) = &response.reading else {
        panic!("not MCP");
    };
    assert!(sse.sse);
    assert_eq!(
        sse.messages.len(),
        2,
        "a progress notification, then the result"
    );
    assert_eq!(
        sse.reply().and_then(|m| m.result_text.as_deref()),
        Some("Success")
    );
    assert_eq!(response.integrity, Integrity::Whole);
    assert_eq!(
        explain_response(&call, &reading).summary,
        "result: \"Success\""
    );

    let tool_error = mcp_hop(
        fixture!("mcp_tools_call_request.json"),
        JSON,
        fixture!("mcp_tool_error.json"),
    );
    let explained = explain_response(&tool_error, &tool_error.reading());
    assert_eq!(
        explained.summary,
        "tool error: \"Param (content) is required\""
    );
    assert!(explained.explanation.contains("meant for the model"));

    let protocol = mcp_hop(
        fixture!("mcp_tools_call_request.json"),
        JSON,
        fixture!("mcp_protocol_error.json"),
    );
    let explained = explain_response(&protocol, &protocol.reading());
    assert_eq!(
        explained.summary,
        "JSON-RPC error -32602: Unknown tool: appendd"
    );
    assert!(explained.explanation.contains("for the developer"));

    let cut = mcp_hop(
        fixture!("mcp_tools_call_request.json"),
        SSE,
        b"id: 0\ndata: \n\n",
    );
    assert_eq!(
        cut.reading().response.expect("response").integrity,
        Integrity::CutOff
    );
}

#[test]
fn mcp_discovery_in_both_eras_and_batches() {
    let init = mcp_hop(
        fixture!("mcp_initialize_request.json"),
        JSON,
        fixture!("mcp_initialize_result.json"),
    );
    let reading = init.reading();
    let Reading::Mcp(request) = &reading.request.reading else {
        panic!("not MCP");
    };
    assert_eq!(request.era, Some(McpEra::Legacy));
    assert_eq!(
        explain_request(&init, &reading, None).summary,
        "initialize (protocol 2025-11-25)"
    );
    assert_eq!(
        explain_response(&init, &reading).summary,
        "agreed on protocol 2025-11-25"
    );

    let mut initialized = mcp_hop(fixture!("mcp_initialized_notification.json"), JSON, b"");
    if let Some(end) = initialized.end.as_mut() {
        end.status = Some(202);
    }
    let reading = initialized.reading();
    let Reading::Mcp(request) = &reading.request.reading else {
        panic!("not MCP");
    };
    assert_eq!(request.messages[0].kind, JsonRpcKind::Notification);
    assert_eq!(
        explain_response(&initialized, &reading).summary,
        "202 accepted, no body"
    );

    let list = mcp_hop(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
        JSON,
        fixture!("mcp_tools_list_result.json"),
    );
    assert_eq!(
        explain_response(&list, &list.reading()).summary,
        "5 tools: read, write, append, update, clear"
    );

    let discover = mcp_hop(
        b"{\"jsonrpc\":\"2.0\",\"id\":\"discover-1\",\"method\":\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
        JSON,
        fixture!("mcp_discover_result.json"),
    );
    let reading = discover.reading();
    assert_eq!(
        explain_request(&discover, &reading, None).summary,
        "server/discover"
    );
    assert_eq!(
        explain_response(&discover, &reading).summary,
        "speaks 2026-07-28"
    );

    let batch = dialect::read_request(
        Dialect::Mcp,
        &[],
        &BodyCapture::whole(fixture!("mcp_batch.json").to_vec()),
    );
    let Reading::Mcp(batch) = batch.reading else {
        panic!("not MCP");
    };
    assert!(batch.batch);
    assert_eq!(batch.messages.len(), 2);
}

#[test]
fn agent_api_and_detection() {
    let agent = hop(
        Role::Agent,
        "/agent",
        fixture!("agent_request.json"),
        JSON,
        fixture!("agent_reply.json"),
    );
    let reading = agent.reading();
    assert_eq!(reading.dialect, Dialect::Agent);
    assert_eq!(
        explain_request(&agent, &reading, None).summary,
        "\"Add buy milk to my notes\""
    );
    assert_eq!(
        explain_response(&agent, &reading).summary,
        "reply: \"I've added \"buy milk\" to your notes.\" (tools: append {\"content\":\"buy milk\"})"
    );
    let detect = |role, path: &str, headers: &[(&str, &str)], body: &[u8]| {
        dialect::detect(role, "POST", path, &support::headers(headers), body)
    };
    assert_eq!(
        detect(Role::Other, "/api/chat?x=1", &[], b""),
        Dialect::OllamaChat
    );
    assert_eq!(detect(Role::Mcp, "/anything", &[], b"{}"), Dialect::Mcp);
    assert_eq!(
        detect(Role::Other, "/rpc", &[("Mcp-Method", "tools/list")], b""),
        Dialect::Mcp
    );
    assert_eq!(
        detect(
            Role::Other,
            "/rpc",
            &[],
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        ),
        Dialect::Mcp
    );
    assert_eq!(
        detect(Role::Model, "/", &[], br#"{"model":"m","prompt":"hi"}"#),
        Dialect::OllamaGenerate
    );
    assert_eq!(detect(Role::Other, "/", &[], b"hello"), Dialect::Unknown);
    assert_eq!(Dialect::AnthropicMessages.as_str(), "anthropic.messages");
}

#[test]
fn in_flight_failed_and_unread_hops_are_explained() {
    let mut in_flight = hop(
        Role::Model,
        "/api/chat",
        fixture!("ollama_chat_request.json"),
        JSON,
        b"",
    );
    if let Some(end) = in_flight.end.as_mut() {
        end.state = Some(HopState::InFlight);
    }
    let messages = explain_trace(std::slice::from_ref(&in_flight));
    assert_eq!(messages.len(), 1, "no response message yet");
    assert_eq!(
        messages[0].line(),
        "1 agent → model  POST /api/chat  qwen2.5:7b, 2 messages, 5 tools"
    );
    assert_eq!(
        explain_response(&in_flight, &in_flight.reading()).summary,
        "waiting for the response…"
    );

    let mut failed = hop(
        Role::Mcp,
        "/mcp",
        fixture!("mcp_tools_call_request.json"),
        JSON,
        b"",
    );
    if let Some(end) = failed.end.as_mut() {
        end.state = Some(HopState::Failed);
        end.status = Some(502);
        end.error = Some("connection refused".into());
    }
    assert_eq!(
        explain_response(&failed, &failed.reading()).summary,
        "no response: connection refused"
    );
}
