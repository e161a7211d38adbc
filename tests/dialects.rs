//! Dialect fixtures (plain and streamed): detection, the normalized reading, and the summary line.

use serde_json::json;
use tracer::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};
use tracer::trace::{RecordedHop, explain_request, explain_response, explain_trace};
use tracer::wire::dialect::{
    self, ChatResponse, Dialect, Integrity, JsonRpcKind, McpEra, Reading, ToolCallForm,
};

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("fixtures/dialects/", $name)).as_slice()
    };
}

fn headers(pairs: &[(&str, &str)]) -> Vec<Header> {
    pairs.iter().map(|(n, v)| Header::new(*n, *v)).collect()
}

/// A finished hop with the given bodies; the response content type decides its framing.
fn hop(role: Role, path: &str, request: &[u8], content_type: &str, response: &[u8]) -> RecordedHop {
    hop_with(role, path, &[], request, content_type, response)
}

fn hop_with(
    role: Role,
    path: &str,
    request_headers: &[(&str, &str)],
    request: &[u8],
    content_type: &str,
    response: &[u8],
) -> RecordedHop {
    RecordedHop {
        start: HopStart {
            id: "00000000000000000000000000000001".into(),
            route: role.as_str().into(),
            role,
            transport: Transport::Http,
            peer: "127.0.0.1:50000".into(),
            method: "POST".into(),
            path: path.into(),
            url: format!("http://127.0.0.1:1{path}"),
            request_headers: headers(request_headers),
            started_unix_ns: 1_000_000_000,
        },
        end: Some(HopEnd {
            id: "00000000000000000000000000000001".into(),
            state: Some(HopState::Complete),
            status: Some(200),
            response_headers: headers(&[("content-type", content_type)]),
            request_body: BodyCapture::whole(request.to_vec()),
            response_body: BodyCapture::whole(response.to_vec()),
            response_first_byte_unix_ns: Some(1_100_000_000),
            response_ended_unix_ns: Some(1_500_000_000),
            ..HopEnd::default()
        }),
    }
}

fn reply_of(hop: &RecordedHop) -> (ChatResponse, Integrity) {
    let response = hop.reading().response.expect("a response");
    match response.reading {
        Reading::ChatResponse(reply) => (*reply, response.integrity),
        other => panic!("not a chat response: {other:?}"),
    }
}

const NDJSON: &str = "application/x-ndjson";
const SSE: &str = "text/event-stream";
const JSON: &str = "application/json";

#[test]
fn ollama_chat_request_and_tool_call_reply() {
    let hop = hop(
        Role::Model,
        "/api/chat",
        fixture!("ollama_chat_request.json"),
        JSON,
        fixture!("ollama_chat_response_tool_call.json"),
    );
    let reading = hop.reading();
    assert_eq!(reading.dialect, Dialect::OllamaChat);
    let Reading::ChatRequest(request) = &reading.request.reading else {
        panic!("not a chat request");
    };
    assert_eq!(request.model.as_deref(), Some("qwen2.5:7b"));
    assert_eq!(
        request.tools,
        ["append", "read", "write", "update", "clear"]
    );
    assert!(!request.stream);
    assert_eq!(request.latest_user_text(), Some("Add buy milk to my notes"));
    let summary = explain_request(&hop, &reading, None).summary;
    assert_eq!(summary, "qwen2.5:7b, 2 messages, 5 tools");

    let (reply, integrity) = reply_of(&hop);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.message.tool_calls.len(), 1);
    assert_eq!(
        reply.message.tool_calls[0].arguments,
        json!({"content": "buy milk"})
    );
    let timings = reply.timings.expect("timings");
    assert_eq!(timings.eval_count, Some(24));
    assert_eq!(timings.tokens_per_second().map(|r| r.round()), Some(50.0));
    let explained = explain_response(&hop, &reading);
    assert_eq!(
        explained.summary,
        "the model asks for tool append {\"content\":\"buy milk\"} (it does not run it: the host will)"
    );
    assert!(
        explained.explanation.contains(
            "load 1.3 ms, prompt 326 tokens in 343 ms, output 24 tokens in 480 ms (50.0 tokens/s)"
        ),
        "{}",
        explained.explanation
    );
    assert!(
        explained
            .explanation
            .contains("first byte after 100 ms, done after 500 ms")
    );
}

#[test]
fn ollama_resend_counts_the_history() {
    let first = hop(
        Role::Model,
        "/api/chat",
        fixture!("ollama_chat_request.json"),
        JSON,
        b"",
    );
    let again = hop(
        Role::Model,
        "/api/chat",
        fixture!("ollama_chat_request_history.json"),
        JSON,
        b"",
    );
    let Reading::ChatRequest(previous) = first.reading().request.reading else {
        panic!("not a chat request");
    };
    let explained = explain_request(&again, &again.reading(), Some(&previous));
    assert_eq!(
        explained.summary,
        "qwen2.5:7b, 4 messages (2 more than last time), 5 tools"
    );
    assert!(
        explained
            .explanation
            .contains("4 messages now, 2 more than last time")
    );
}

#[test]
fn ollama_streams_are_reassembled_with_crlf_too() {
    for body in [
        fixture!("ollama_chat_stream_text.ndjson").to_vec(),
        String::from_utf8_lossy(fixture!("ollama_chat_stream_text.ndjson"))
            .replace('\n', "\r\n")
            .into_bytes(),
    ] {
        let hop = hop(
            Role::Model,
            "/api/chat",
            b"{\"model\":\"qwen3:8b\"}",
            NDJSON,
            &body,
        );
        let (reply, integrity) = reply_of(&hop);
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!(
            reply.message.content,
            "I've added \"buy milk\" to your notes."
        );
        assert_eq!(reply.message.thinking, "The user wants a confirmation.");
        assert_eq!(reply.records, 10);
        assert!(reply.streamed);
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        let explained = explain_response(&hop, &hop.reading());
        assert_eq!(
            explained.summary,
            "the model answers: \"I've added \"buy milk\" to your notes.\""
        );
        assert!(explained.explanation.contains("stream of 10 records"));
    }
    let hop = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        NDJSON,
        fixture!("ollama_chat_stream_tool_call.ndjson"),
    );
    let (reply, _) = reply_of(&hop);
    assert_eq!(
        reply.message.tool_calls[0].id.as_deref(),
        Some("call_k3j9x0ab")
    );
    assert_eq!(
        reply.message.tool_calls[0].display(),
        "get_weather {\"city\":\"Tokyo\"}"
    );
}

#[test]
fn ollama_cut_off_errors_and_truncated_captures_are_labelled() {
    let cut = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        NDJSON,
        fixture!("ollama_chat_stream_cut.ndjson"),
    );
    let (reply, integrity) = reply_of(&cut);
    assert_eq!(integrity, Integrity::CutOff);
    assert_eq!(reply.message.content, "I've added \"buy");
    assert!(
        explain_response(&cut, &cut.reading())
            .explanation
            .contains("stopped before its end marker")
    );

    let failed = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        NDJSON,
        fixture!("ollama_chat_stream_error.ndjson"),
    );
    let (reply, _) = reply_of(&failed);
    assert!(
        reply
            .error
            .as_deref()
            .is_some_and(|e| e.contains("unexpected EOF"))
    );
    assert!(
        explain_response(&failed, &failed.reading())
            .summary
            .starts_with("model server error:")
    );

    let missing = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        JSON,
        fixture!("ollama_chat_not_found.json"),
    );
    assert_eq!(
        explain_response(&missing, &missing.reading()).summary,
        "model server error: model \"qwen9:1b\" not found, try pulling it first"
    );

    let mut truncated = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        NDJSON,
        &fixture!("ollama_chat_stream_text.ndjson")[..300],
    );
    if let Some(end) = truncated.end.as_mut() {
        end.response_body.truncated = true;
        end.response_body.total_len = 5000;
    }
    let (_, integrity) = reply_of(&truncated);
    assert_eq!(
        integrity,
        Integrity::Truncated {
            kept: 300,
            total: 5000
        }
    );

    let garbage = hop(
        Role::Model,
        "/api/chat",
        b"not json at all",
        JSON,
        b"<html>502</html>",
    );
    let reading = garbage.reading();
    assert!(matches!(reading.request.integrity, Integrity::Malformed(_)));
    assert!(matches!(
        reading.response.expect("response").integrity,
        Integrity::Malformed(_)
    ));
}

#[test]
fn ollama_generate_is_read_as_a_prompt() {
    let hop = hop(
        Role::Model,
        "/api/generate",
        fixture!("ollama_generate_request.json"),
        NDJSON,
        fixture!("ollama_generate_stream.ndjson"),
    );
    let reading = hop.reading();
    assert_eq!(reading.dialect, Dialect::OllamaGenerate);
    let Reading::ChatRequest(request) = &reading.request.reading else {
        panic!("not a request");
    };
    assert_eq!(request.latest_user_text(), Some("Why is the sky blue?"));
    assert_eq!(request.system.as_deref(), Some("Be brief."));
    assert!(request.stream, "Ollama streams unless told not to");
    let (reply, integrity) = reply_of(&hop);
    assert_eq!(
        (reply.message.content.as_str(), integrity),
        ("Rayleigh scattering.", Integrity::Whole)
    );
}

#[test]
fn tool_calls_written_as_text_are_labelled() {
    let seed = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        JSON,
        fixture!("ollama_chat_response_text_json_call.json"),
    );
    let (reply, _) = reply_of(&seed);
    assert_eq!(reply.message.tool_calls[0].form, ToolCallForm::TextJson);
    let explained = explain_response(&seed, &seed.reading());
    assert_eq!(
        explained.summary,
        "the model writes a tool call as text: tool_get_phonenumber_post {\"name\":\"Joshua Wilson\"}"
    );
    assert!(explained.explanation.contains("JSON in the text"));

    let qwen = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        JSON,
        fixture!("ollama_chat_response_qwen_tags.json"),
    );
    let (reply, _) = reply_of(&qwen);
    assert_eq!(reply.message.tool_calls[0].form, ToolCallForm::TextTag);
    assert!(
        explain_response(&qwen, &qwen.reading())
            .explanation
            .contains("<tool_call> tags")
    );
}

#[test]
fn openai_plain_and_streamed_arguments_are_joined() {
    let plain = hop(
        Role::Model,
        "/v1/chat/completions",
        fixture!("openai_chat_request.json"),
        JSON,
        fixture!("openai_chat_response.json"),
    );
    let reading = plain.reading();
    assert_eq!(reading.dialect, Dialect::OpenAiChat);
    let Reading::ChatRequest(request) = &reading.request.reading else {
        panic!("not a request");
    };
    assert!(request.stream);
    assert_eq!(
        request.latest_user_text(),
        Some("What's the weather in Boston?")
    );
    assert_eq!(
        request.messages[2].tool_calls[0].arguments,
        json!({"location": "Boston, MA"})
    );
    assert_eq!(
        request.messages[3].tool_call_id.as_deref(),
        Some("call_abc123")
    );
    let (reply, _) = reply_of(&plain);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(reply.usage.output_tokens, Some(17));

    let body = fixture!("openai_chat_stream_tool_call.sse");
    for body in [
        body.to_vec(),
        String::from_utf8_lossy(body)
            .replace('\n', "\r\n")
            .into_bytes(),
    ] {
        let streamed = hop(Role::Model, "/v1/chat/completions", b"{}", SSE, &body);
        let (reply, integrity) = reply_of(&streamed);
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!(reply.message.tool_calls.len(), 1);
        let call = &reply.message.tool_calls[0];
        assert_eq!(call.id.as_deref(), Some("call_c91SqDXlYFuETYv8mUHzz6pp"));
        assert_eq!(
            call.arguments,
            json!({"city": "Edinburgh", "country": "UK", "units": "c"})
        );
        assert_eq!(reply.usage.input_tokens, Some(76));
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    }

    let cut = hop(
        Role::Model,
        "/v1/chat/completions",
        b"{}",
        SSE,
        fixture!("openai_chat_stream_cut.sse"),
    );
    let (reply, integrity) = reply_of(&cut);
    assert_eq!(integrity, Integrity::CutOff);
    assert_eq!(reply.message.content, "Hello! How can I help?");
}

#[test]
fn anthropic_blocks_and_stream() {
    let hop = hop_with(
        Role::Model,
        "/v1/messages",
        &[("anthropic-version", "2023-06-01")],
        fixture!("anthropic_request.json"),
        SSE,
        fixture!("anthropic_stream_tool_use.sse"),
    );
    let reading = hop.reading();
    assert_eq!(reading.dialect, Dialect::AnthropicMessages);
    let Reading::ChatRequest(request) = &reading.request.reading else {
        panic!("not a request");
    };
    let roles: Vec<&str> = request.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert!(request.messages[2].is_error);
    assert_eq!(
        request.messages[1].tool_calls[0].arguments,
        json!({"location": "Paris"})
    );
    assert_eq!(request.system.as_deref(), Some("You answer briefly."));
    let (reply, integrity) = reply_of(&hop);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(
        reply.message.content,
        "I'll check the current weather in Paris for you."
    );
    assert_eq!(
        reply.message.tool_calls[0].arguments,
        json!({"location": "Paris"})
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(reply.usage.output_tokens, Some(65));

    let plain = super_plain();
    let (reply, _) = reply_of(&plain);
    assert_eq!(
        reply.message.content,
        "It is 18 degrees and cloudy in Paris."
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));
}

fn super_plain() -> RecordedHop {
    hop(
        Role::Model,
        "/v1/messages",
        fixture!("anthropic_request.json"),
        JSON,
        fixture!("anthropic_response.json"),
    )
}

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
    assert_eq!(request.era, McpEra::Modern);
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
    assert_eq!(request.era, McpEra::Legacy);
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
        dialect::detect(role, "POST", path, &self::headers(headers), body)
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
