//! Grouping and numbering over hop records: the buy-milk trace, interleaved traces with no
//! traceparent, traceparent propagation, a start-up setup trace, and a host without an agent route.

use crate::trace_hops as support;

use serde_json::{Value, json};
use support::{BASE, HopBuilder, MS, buy, buy_slow, hop, inputs};
use tracer_trace::{
    Direction, GroupOptions, Grouper, Reason, RecordedHop, TraceKind, explain_trace, group,
};
use tracer_wire::hop::Role;

#[test]
fn buy_milk_is_one_trace_of_ten_numbered_messages() {
    let hops = buy("a", "buy milk", 0);
    let grouping = group(&inputs(&hops), GroupOptions::default());
    assert_eq!(grouping.traces.len(), 1);
    let trace = &grouping.traces[0];
    assert_eq!(trace.id, hops[0].start.id, "the agent hop opens the trace");
    assert_eq!(trace.title.as_deref(), Some("Add buy milk to my notes"));
    assert_eq!(trace.kind, TraceKind::Request);
    assert_eq!(trace.ended_ns, Some(BASE + 1000 * MS));
    let reasons: Vec<Reason> = grouping.assignments.iter().map(|a| a.reason).collect();
    assert_eq!(
        reasons,
        [
            Reason::OpensAgentRequest,
            Reason::Discovery,
            Reason::UserText,
            Reason::ToolCall,
            Reason::UserText
        ]
    );

    let messages = explain_trace(&hops);
    let lines: Vec<String> = messages.iter().map(|m| m.line()).collect();
    assert_eq!(
        lines,
        [
            "1 you → agent  POST /agent  \"Add buy milk to my notes\"",
            "2 agent → mcp  POST /mcp  tools/list",
            "3 mcp → agent  200  2 tools: append, read",
            "4 agent → model  POST /api/chat  qwen2.5:7b, 2 messages, 5 tools",
            "5 model → agent  200  the model asks for tool append {\"content\":\"buy milk\"} (it does not run it: the host will) · run in message 6",
            "6 agent → mcp  POST /mcp  tools/call append {\"content\":\"buy milk\"} · asked for in message 5",
            "7 mcp → agent  200  result: \"Success\"",
            "8 agent → model  POST /api/chat  qwen2.5:7b, 4 messages (2 more than last time), 5 tools",
            "9 model → agent  200  the model answers: \"I've added \"buy milk\".\"",
            "10 agent → you  200  reply: \"I've added \"buy milk\".\" (tools: append {\"content\":\"buy milk\"})",
        ]
    );
    assert_eq!(messages[9].direction, Direction::Response);
    assert!(messages.iter().all(|m| !m.explanation.is_empty()));
}

/// Every hop id starts with its trace's prefix; returns (right, total).
fn score(hops: &[RecordedHop], grouping: &tracer_trace::Grouping) -> (usize, usize) {
    let opener = |hop_id: &str| {
        format!(
            "{}1",
            &hop_id.trim_start_matches('0')[..hop_id.trim_start_matches('0').len() - 1]
        )
    };
    let mut right = 0;
    for assignment in &grouping.assignments {
        let expected = hops
            .iter()
            .find(|h| h.start.id.trim_start_matches('0') == opener(&assignment.hop_id))
            .map(|h| h.start.id.clone());
        if expected.as_deref() == Some(assignment.trace_id.as_str()) {
            right += 1;
        }
    }
    (right, grouping.assignments.len())
}

#[test]
fn interleaved_traces_without_traceparent_are_told_apart() {
    let mut hops = Vec::new();
    for i in 0..100 {
        // A new request every 23 ms, each lasting one to two seconds, model calls of varying
        // speed: dozens in flight at once, their hops interleaved.
        let slow = (i * 37 % 11) * 50;
        hops.extend(buy_slow(
            &format!("{}", 100 + i),
            &format!("item {i}"),
            i * 23,
            slow,
        ));
    }
    let grouping = group(&inputs(&hops), GroupOptions::default());
    let (right, total) = score(&hops, &grouping);
    println!("interleaved, no traceparent: {right}/{total} hops in the right trace");
    assert_eq!(total, 500);
    assert_eq!(right, total, "{right}/{total} hops in the right trace");
    assert_eq!(grouping.traces.len(), 100);
}

#[test]
fn traceparent_places_hops_exactly_even_with_identical_content() {
    let mut hops = Vec::new();
    for (n, trace_id) in [
        "0af7651916cd43dd8448eb211c80319c",
        "1bf7651916cd43dd8448eb211c80319d",
    ]
    .iter()
    .enumerate()
    {
        let traceparent = format!("00-{trace_id}-b7ad6b7169203331-01");
        for hop in buy(&format!("{}", 7 + n), "buy milk", n as i64 * 5) {
            hops.push(
                HopBuilder { hop }
                    .header("traceparent", &traceparent)
                    .done(),
            );
        }
    }
    let grouping = group(&inputs(&hops), GroupOptions::default());
    assert_eq!(grouping.traces.len(), 2);
    assert_eq!(grouping.traces[0].id, "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(grouping.traces[0].hop_ids.len(), 5);
    assert!(
        grouping
            .assignments
            .iter()
            .skip(2)
            .all(|a| a.reason == Reason::Traceparent)
    );
    let (right, _) = score(&hops, &grouping);
    assert_eq!(
        right, 0,
        "trace ids are the traceparent's, not the opener's"
    );
    for assignment in &grouping.assignments {
        let n = assignment.hop_id.trim_start_matches('0').chars().next();
        let expected = if n == Some('7') {
            "0af7651916cd43dd8448eb211c80319c"
        } else {
            "1bf7651916cd43dd8448eb211c80319d"
        };
        assert_eq!(assignment.trace_id, expected);
    }
}

#[test]
fn mcp_meta_traceparent_joins_its_trace() {
    let id = "0af7651916cd43dd8448eb211c80319c";
    let hops = vec![
        hop("1", Role::Agent, "/agent", 0, 100).bodies(json!({"message": "hi"}), json!({"reply": "hello"})).header("traceparent", &format!("00-{id}-b7ad6b7169203331-01")).done(),
        hop("2", Role::Agent, "/agent", 1, 100).bodies(json!({"message": "other"}), json!({"reply": "x"})).done(),
        hop("3", Role::Mcp, "/mcp", 50, 60)
            .bodies(json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"traceparent": format!("00-{id}-00f067aa0ba902b7-01")}}}), json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
            .done(),
    ];
    let grouping = group(&inputs(&hops), GroupOptions::default());
    assert_eq!(grouping.assignments[2].trace_id, id);
    assert_eq!(grouping.assignments[2].reason, Reason::Traceparent);
}

#[test]
fn start_up_discovery_is_a_setup_trace_of_its_own() {
    let mut hops = vec![
        hop("51", Role::Mcp, "/mcp", 0, 5).bodies(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}), json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}})).done(),
        hop("52", Role::Mcp, "/mcp", 6, 7).bodies(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), Value::Null).done(),
        hop("53", Role::Mcp, "/mcp", 8, 12).bodies(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "append"}]}})).done(),
        // Start-up chatter with no evidence (open-webui lists the models) joins the setup too.
        hop("54", Role::Model, "/api/tags", 20, 21).bodies(Value::Null, json!({"models": []})).done(),
    ];
    hops.extend(buy("6", "buy milk", 200));
    let grouping = group(&inputs(&hops), GroupOptions::default());
    assert_eq!(grouping.traces.len(), 2);
    let setup = &grouping.traces[0];
    assert_eq!(setup.kind, TraceKind::Setup);
    assert_eq!(setup.hop_ids.len(), 4);
    assert!(
        grouping.assignments[..4]
            .iter()
            .all(|a| a.reason == Reason::Setup)
    );
    let request = &grouping.traces[1];
    assert_eq!(request.kind, TraceKind::Request);
    assert_eq!(
        request.hop_ids.len(),
        5,
        "the first request's own tools/list stays with it"
    );
}

#[test]
fn without_an_agent_route_the_user_text_opens_traces() {
    // Seed 002: open-webui asks the model with its own prompt, the model writes the call as JSON
    // text, mcpo calls the MCP tool under its own name, then open-webui asks again with a context.
    let question = "What is the phone number of Joshua Wilson?";
    let first_prompt = format!("Query: History:\nUSER: \"\"\"{question}\"\"\"\nQuery: {question}");
    let second_prompt = format!(
        "<context>\n<source id=\"1\" name=\"server:3/tool_get_phonenumber_post\">555-66666666</source>\n</context>\n<user_query>\n{question}\n</user_query>"
    );
    let text_call = "```json\n{\"tool_calls\": [{\"name\": \"tool_get_phonenumber_post\", \"parameters\": {\"name\": \"Joshua Wilson\"}}]}\n```";
    let model = |id: &str, t: i64, prompt: &str, answer: &str| {
        hop(id, Role::Model, "/api/chat", t, t + 100)
            .bodies(
                json!({"model": "gemma3:27b", "messages": [{"role": "system", "content": "Available Tools: [...]"}, {"role": "user", "content": prompt}], "stream": false}),
                json!({"model": "gemma3:27b", "message": {"role": "assistant", "content": answer}, "done": true}),
            )
            .done()
    };
    let hops = vec![
        hop("91", Role::Mcp, "/mcp", 0, 5).bodies(json!({"method": "tools/list", "jsonrpc": "2.0", "id": 1}), json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "get_phonenumber"}]}})).done(),
        model("92", 60_000, &first_prompt, text_call),
        hop("93", Role::Mcp, "/mcp", 60_150, 60_160)
            .bodies(json!({"method": "tools/call", "params": {"name": "get_phonenumber", "arguments": {"name": "Joshua Wilson"}}, "jsonrpc": "2.0", "id": 2}), json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "555-66666666"}], "isError": false}}))
            .done(),
        model("94", 60_200, &second_prompt, "The phone number is 555-66666666."),
        model("95", 61_000, "And the number of Emily Davis?", "555-33333333"),
    ];
    let grouping = group(&inputs(&hops), GroupOptions::default());
    let reasons: Vec<Reason> = grouping.assignments.iter().map(|a| a.reason).collect();
    assert_eq!(
        reasons,
        [
            Reason::Setup,
            Reason::OpensUserText,
            Reason::ToolCall,
            Reason::UserText,
            Reason::OpensUserText
        ]
    );
    assert_eq!(grouping.traces.len(), 3);
    assert_eq!(grouping.traces[1].hop_ids.len(), 3);
    assert_eq!(
        grouping.traces[1].title.as_deref(),
        // A title is one line.
        Some(
            first_prompt
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .as_str()
        )
    );
    assert_eq!(
        grouping.traces[2].title.as_deref(),
        Some("And the number of Emily Davis?")
    );
}

#[test]
fn time_is_the_last_resort_and_far_hops_stand_alone() {
    let mut hops = buy("3", "buy milk", 0);
    hops.push(
        hop("41", Role::Other, "/api/tags", 300, 301)
            .bodies(Value::Null, json!({"models": []}))
            .done(),
    );
    hops.push(
        hop("42", Role::Other, "/api/tags", 900_000, 900_001)
            .bodies(Value::Null, json!({"models": []}))
            .done(),
    );
    let grouping = group(&inputs(&hops), GroupOptions::default());
    let of = |id: &str| {
        grouping
            .assignments
            .iter()
            .find(|a| a.hop_id.ends_with(id))
            .map(|a| (a.trace_id.clone(), a.reason))
    };
    assert_eq!(of("41"), Some((hops[0].start.id.clone(), Reason::Time)));
    assert_eq!(of("42").map(|(_, reason)| reason), Some(Reason::Alone));
}

#[test]
fn assigning_one_by_one_matches_the_batch_and_place_restores_state() {
    let hops = buy("8", "buy milk", 0);
    let batch = group(&inputs(&hops), GroupOptions::default());
    let mut grouper = Grouper::new(GroupOptions::default());
    let live: Vec<_> = inputs(&hops)
        .iter()
        .map(|input| grouper.assign(input))
        .collect();
    assert_eq!(live, batch.assignments);

    // A grouper restored from stored assignments places the rest the same way.
    let all = inputs(&hops);
    let mut restored = Grouper::new(GroupOptions::default());
    for (input, assignment) in all.iter().zip(&batch.assignments).take(3) {
        restored.place(input, &assignment.trace_id, TraceKind::Request);
    }
    let rest: Vec<_> = all[3..]
        .iter()
        .map(|input| restored.assign(input))
        .collect();
    assert_eq!(rest, batch.assignments[3..]);
}
