//! Unit tests of the span builder over hand-made hops: names, kinds, the synthesized root, tool
//! call ids, MCP targets, contents only when asked.

use serde_json::json;

use super::model::SpanOptions;
use super::model::{AttrValue, SpanKind, root_span_id};
use super::span::trace_spans;
use crate::body_text::TraceToExport;
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

fn hop(
    id: &str,
    role: Role,
    path: &str,
    at_ms: i64,
    request: serde_json::Value,
    response: serde_json::Value,
) -> RecordedHop {
    let start = HopStart {
        id: id.to_string(),
        route: role.as_str().to_string(),
        role,
        transport: Transport::Http,
        peer: "127.0.0.1:1".into(),
        method: "POST".into(),
        path: path.into(),
        url: format!("http://127.0.0.1:9000{path}"),
        request_headers: vec![Header::new("content-type", "application/json")],
        started_unix_ns: at_ms * 1_000_000,
        run_id: None,
    };
    let end = HopEnd {
        id: id.to_string(),
        state: Some(HopState::Complete),
        status: Some(200),
        response_headers: vec![Header::new("content-type", "application/json")],
        request_body: BodyCapture::whole(request.to_string().into_bytes()),
        response_body: BodyCapture::whole(response.to_string().into_bytes()),
        response_ended_unix_ns: Some((at_ms + 5) * 1_000_000),
        ..HopEnd::default()
    };
    RecordedHop {
        read: Default::default(),
        start,
        end: Some(end),
    }
}

fn text<'a>(span: &'a super::Span, key: &str) -> Option<&'a str> {
    span.text_attribute(key)
}

/// An OpenAI-style model call asking for `append` (call id `call_7`), then the MCP call.
fn model_then_tool() -> Vec<RecordedHop> {
    vec![
        hop(
            "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
            Role::Model,
            "/v1/chat/completions",
            0,
            json!({"model": "gpt-x", "messages": [{"role": "user", "content": "buy milk"}]}),
            json!({"model": "gpt-x", "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "tool_calls": [{"id": "call_7", "type": "function", "function": {"name": "append", "arguments": "{\"content\":\"milk\"}"}}]}}], "usage": {"prompt_tokens": 10, "completion_tokens": 3}}),
        ),
        hop(
            "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
            Role::Mcp,
            "/mcp",
            10,
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "append", "arguments": {"content": "milk"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "no space left"}], "isError": true}}),
        ),
    ]
}

#[test]
fn a_trace_without_an_agent_hop_gets_a_synthesized_root() {
    let hops = model_then_tool();
    let trace = TraceToExport {
        fetch: None,
        session: None,
        id: "0af7651916cd43dd8448eb211c80319c",
        title: Some("buy milk"),
        hops: &hops,
        agent_events: &[],
    };
    let spans = trace_spans(&trace, SpanOptions::default());
    assert_eq!(spans.len(), 3);
    let root = &spans[0];
    assert_eq!(
        (root.name.as_str(), root.kind),
        ("invoke_agent", SpanKind::Internal)
    );
    assert_eq!(root.span_id, root_span_id(trace.id));
    assert_eq!(root.hop_id, None);
    assert_eq!((root.start_unix_ns, root.end_unix_ns), (0, 15_000_000));
    assert!(text(root, "input.value").is_none());
    for span in &spans[1..] {
        assert_eq!(span.parent_span_id.as_deref(), Some(root.span_id.as_str()));
        assert_eq!(span.trace_id, trace.id);
    }
    let chat = &spans[1];
    assert_eq!(chat.name, "chat gpt-x");
    assert_eq!(text(chat, "gen_ai.provider.name"), Some("openai"));
    assert_eq!(text(chat, "llm.system"), Some("openai"));
    let tokens = chat
        .attributes
        .iter()
        .find(|a| a.key == "llm.token_count.total")
        .unwrap();
    assert_eq!(tokens.value, AttrValue::Int(13));
    let tool = &spans[2];
    assert_eq!(tool.name, "execute_tool append");
    assert_eq!(text(tool, "gen_ai.tool.call.id"), Some("call_7"));
    assert_eq!(text(tool, "error.type"), Some("tool_error"));
    assert_eq!(
        tool.error.as_deref(),
        Some("the tool reported an error (isError)")
    );
    assert!(text(tool, "gen_ai.tool.call.result").is_none());
    assert!(text(tool, "tracer.response.summary").is_none());
}

#[test]
fn contents_come_only_when_asked() {
    let hops = model_then_tool();
    let trace = TraceToExport {
        fetch: None,
        session: None,
        id: "t-1",
        title: Some("buy milk"),
        hops: &hops,
        agent_events: &[],
    };
    let spans = trace_spans(&trace, SpanOptions { content: true });
    assert_eq!(
        spans[0].trace_id.len(),
        32,
        "a non-hex id is hashed to a trace id"
    );
    assert_eq!(text(&spans[0], "input.value"), Some("buy milk"));
    let tool = &spans[2];
    assert_eq!(
        text(tool, "gen_ai.tool.call.arguments"),
        Some(r#"{"content":"milk"}"#)
    );
    assert_eq!(text(tool, "gen_ai.tool.call.result"), Some("no space left"));
    assert_eq!(tool.error.as_deref(), Some("no space left"));
    let output = text(&spans[1], "gen_ai.output.messages").unwrap();
    assert!(
        output.contains(r#""finish_reason":"tool_call""#),
        "{output}"
    );
    assert!(text(tool, "tracer.request.summary").is_some());
}

#[test]
fn mcp_targets_name_prompts_and_resources() {
    let hops = vec![hop(
        "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
        Role::Mcp,
        "/mcp",
        0,
        json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "summarize"}}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"messages": []}}),
    )];
    let trace = TraceToExport {
        fetch: None,
        session: None,
        id: "t-2",
        title: None,
        hops: &hops,
        agent_events: &[],
    };
    let spans = trace_spans(&trace, SpanOptions::default());
    assert_eq!(spans.len(), 2, "one hop under its synthesized root");
    assert_eq!(spans[0].name, "discovery");
    let span = &spans[1];
    assert_eq!(span.name, "prompts/get summarize");
    assert_eq!(text(span, "gen_ai.prompt.name"), Some("summarize"));
    assert_eq!(text(span, "jsonrpc.request.id"), Some("1"));
    assert_eq!(text(span, "server.port"), None, "server.port is an integer");
    assert!(
        span.attributes
            .iter()
            .any(|a| a.key == "server.port" && a.value == AttrValue::Int(9000))
    );
}

#[test]
fn a_trace_that_grows_keeps_its_root_and_every_parent() {
    let all = model_then_tool();
    let id = "0af7651916cd43dd8448eb211c80319c";
    let first = trace_spans(
        &TraceToExport {
            fetch: None,
            session: None,
            id,
            title: None,
            hops: &all[..1],
            agent_events: &[],
        },
        SpanOptions::default(),
    );
    // One hop: the root is there already, and the chat span hangs under it.
    assert_eq!(first.len(), 2);
    assert_eq!(first[0].span_id, root_span_id(id));
    assert_eq!(first[1].parent_span_id, Some(root_span_id(id)));
    // An agent hop joining later (by traceparent) does not take the root's place.
    let mut grown = all.clone();
    grown.push(hop(
        "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4",
        Role::Agent,
        "/agent",
        20,
        json!({"message": "sub-task"}),
        json!({"reply": "done"}),
    ));
    let later = trace_spans(
        &TraceToExport {
            fetch: None,
            session: None,
            id,
            title: None,
            hops: &grown,
            agent_events: &[],
        },
        SpanOptions::default(),
    );
    assert_eq!(later.len(), 4);
    let roots: Vec<&str> = later
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .map(|s| s.span_id.as_str())
        .collect();
    assert_eq!(roots, [root_span_id(id)]);
    for (before, after) in first.iter().zip(&later) {
        assert_eq!(
            (&before.span_id, &before.parent_span_id),
            (&after.span_id, &after.parent_span_id)
        );
    }
}

#[test]
fn every_span_names_the_session_by_the_hosts_own_id() {
    let all = model_then_tool();
    let session = crate::hop_log::SessionEntry {
        id: "e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1".into(),
        host_session_id: Some("e4865556-21fa-42c0-807b-5403630c0d10".into()),
    };
    let spans = trace_spans(
        &TraceToExport {
            fetch: None,
            session: Some(&session),
            id: "0af7651916cd43dd8448eb211c80319c",
            title: None,
            hops: &all,
            agent_events: &[],
        },
        SpanOptions::default(),
    );
    assert!(spans.len() > 1);
    for span in &spans {
        assert_eq!(
            span.text_attribute("session.id"),
            Some("e4865556-21fa-42c0-807b-5403630c0d10")
        );
        assert_eq!(
            span.text_attribute("tracer.session.id"),
            Some(session.id.as_str())
        );
    }
}
