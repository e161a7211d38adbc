//! Whole-trace summaries for listings, hop numbers, and a few explanation cases over hop records.

use crate::trace_hops as support;

use serde_json::json;
use support::{MS, buy, hop};
use tracer_trace::{Case, Direction, TraceStatus, explain_trace, summarize};
use tracer_wire::hop::{HopState, Role};

#[test]
fn buy_milk_summary_for_ls() {
    let hops = buy("a", "buy milk", 0);
    let summary = summarize(&hops);
    assert_eq!(summary.title.as_deref(), Some("Add buy milk to my notes"));
    assert_eq!((summary.hops, summary.messages), (5, 10));
    assert_eq!(summary.duration_ns, Some(1000 * MS));
    assert_eq!(summary.status, TraceStatus::Ok);
    assert_eq!(summary.tools_used, ["append"]);

    let messages = explain_trace(&hops);
    let reply = messages.last().expect("messages");
    assert_eq!(
        (reply.number, reply.hop_number, reply.direction),
        (10, 1, Direction::Response)
    );
    let result = &messages[6];
    assert_eq!(
        (result.number, result.hop_number, result.case),
        (7, 6, Case::McpToolResult)
    );
}

#[test]
fn statuses_rank_the_worst_hop() {
    let mut hops = buy("b", "buy milk", 0);
    if let Some(end) = hops[3].end.as_mut() {
        end.response_body = tracer_wire::hop::BodyCapture::whole(
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Param (content) is required"}], "isError": true}})
                .to_string()
                .into_bytes(),
        );
    }
    // A hop keeps its reading once made: the edited hops are read again.
    hops.iter_mut()
        .for_each(|hop| hop.read = Default::default());
    assert_eq!(summarize(&hops).status, TraceStatus::ToolError);

    if let Some(end) = hops[1].end.as_mut() {
        end.response_body = tracer_wire::hop::BodyCapture::whole(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}})
                .to_string()
                .into_bytes(),
        );
    }
    // A hop keeps its reading once made: the edited hops are read again.
    hops.iter_mut()
        .for_each(|hop| hop.read = Default::default());
    assert_eq!(summarize(&hops).status, TraceStatus::ProtocolError);

    if let Some(end) = hops[2].end.as_mut() {
        end.state = Some(HopState::Failed);
        end.status = Some(502);
    }
    // A hop keeps its reading once made: the edited hops are read again.
    hops.iter_mut()
        .for_each(|hop| hop.read = Default::default());
    assert_eq!(summarize(&hops).status, TraceStatus::Failed);

    if let Some(end) = hops[0].end.as_mut() {
        end.state = Some(HopState::InFlight);
    }
    // A hop keeps its reading once made: the edited hops are read again.
    hops.iter_mut()
        .for_each(|hop| hop.read = Default::default());
    let summary = summarize(&hops);
    assert_eq!(
        (summary.status, summary.duration_ns, summary.messages),
        (TraceStatus::InFlight, None, 9)
    );
}

#[test]
fn model_load_and_structured_results_are_explained() {
    let hops = vec![
        hop("c1", Role::Model, "/api/chat", 0, 50)
            .bodies(json!({"model": "qwen2.5:7b", "messages": []}), json!({"model": "qwen2.5:7b", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "load"}))
            .done(),
        hop("c2", Role::Mcp, "/mcp", 60, 70)
            .bodies(
                json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "get_weather_data", "arguments": {"location": "Seattle"}}}),
                json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "complete", "content": [], "structuredContent": {"temperature": 22.5}}}),
            )
            .done(),
    ];
    let lines: Vec<String> = explain_trace(&hops).iter().map(|m| m.line()).collect();
    assert_eq!(
        lines,
        [
            "1 agent → model  POST /api/chat  load qwen2.5:7b (no messages)",
            "2 model → agent  200  empty reply (finish: load)",
            "3 agent → mcp  POST /mcp  tools/call get_weather_data {\"location\":\"Seattle\"}",
            "4 mcp → agent  200  result: structured content {\"temperature\":22.5}",
        ]
    );
}
