//! A Claude Code subagent (its `Agent` tool, `Task` before 2.1) is a thread of its own inside
//! the trace, linked to the answer that asked for it. The run is CONSTRUCTED from Claude Code
//! 2.1.197's recorded hops (tests/fixtures/agents/claude-code/: its bodies, headers and tool
//! list, no subagent run was recorded): the first answer asks for `Agent` with a prompt instead
//! of calling the notes tool; the subagent's two requests are the recorded turns with the prompt
//! as their first (fresh) user message, and its tool call runs the recorded `tools/call`; the
//! main conversation's second request carries the `Agent` result. Grouped in one trace titled by
//! the user's words, the subagent's messages are marked `subagent 1 (…, asked in message N)`,
//! never side calls, and the answer that asked says it started the subagent (show, hop log).
//! The same holds for a real Claude Code run with a subagent (claude-code-subagent/).

use serde_json::{Value, json};
use tracer_export::hop_log::HopLog;
use tracer_live::correlate::{GroupScope, correlate};
use tracer_live::load::{Bodies, load_trace};
use tracer_store::{Store, hops};
use tracer_trace::{Direction, GroupOptions, RecordedHop, explain_trace};
use tracer_wire::hop::{BodyCapture, HopEnd, HopStart};

use crate::agent_trace::{agent_dir, agent_hops, has_agent};

const PROMPT: &str = "Append \"buy milk\" to the user's notes with the notes tool, then say so.";
const SPAWN_ID: &str = "toolu_01ScriptedAppendCall0001";

fn file(name: &str) -> Vec<u8> {
    std::fs::read(agent_dir("claude-code").join(name)).unwrap()
}

fn json_file(name: &str) -> Value {
    serde_json::from_slice(&file(name)).unwrap()
}

/// The first answer, asking for the `Agent` tool instead of the notes tool.
fn spawning_answer() -> Vec<u8> {
    let input = json!({"description": "Add the note", "prompt": PROMPT,
        "subagent_type": "general-purpose"})
    .to_string();
    let events = [
        json!({"type":"message_start","message":{"id":"msg_spawn","type":"message",
            "role":"assistant","model":"claude-opus-4-8","content":[],"stop_reason":null,
            "usage":{"input_tokens":4957,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use",
            "id":SPAWN_ID,"name":"Agent","input":{}}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",
            "partial_json":input}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},
            "usage":{"output_tokens":60}}),
        json!({"type":"message_stop"}),
    ];
    let mut out = String::new();
    for event in events {
        out.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    out.into_bytes()
}

/// A recorded request with its first user message replaced by the subagent's prompt.
fn subagent_request(name: &str) -> Vec<u8> {
    let mut request = json_file(name);
    request["messages"][0] = json!({"role": "user", "content": [{"type": "text", "text": PROMPT}]});
    let tools = request["tools"].as_array_mut().unwrap();
    tools.retain(|t| t["name"] != "Agent");
    serde_json::to_vec(&request).unwrap()
}

/// The main conversation's second request: its tool call is the `Agent` call.
fn main_second_request() -> Vec<u8> {
    let mut request = json_file("turn2_request.json");
    let messages = request["messages"].as_array_mut().unwrap();
    let assistant = messages
        .iter_mut()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    for block in assistant["content"].as_array_mut().unwrap() {
        if block["type"] == "tool_use" {
            block["name"] = json!("Agent");
            block["input"] = json!({"description": "Add the note", "prompt": PROMPT,
                "subagent_type": "general-purpose"});
        }
    }
    serde_json::to_vec(&request).unwrap()
}

fn with_bodies(hop: &RecordedHop, id: usize, request: Vec<u8>, response: Vec<u8>) -> RecordedHop {
    let mut hop = hop.clone();
    let id = format!("{id:0>32}");
    hop.start.id = id.clone();
    let end = hop.end.as_mut().unwrap();
    end.id = id;
    end.request_body = BodyCapture::whole(request);
    end.response_body = BodyCapture::whole(response);
    hop
}

/// The constructed run, 100 ms apart: start-up, the spawning turn, the subagent's two turns
/// with its `tools/call` between, the main conversation's answer.
fn run() -> Vec<RecordedHop> {
    let recorded = agent_hops("claude-code");
    let (turn1, call, turn2) = (&recorded[5], &recorded[6], &recorded[7]);
    let mut hops: Vec<RecordedHop> = recorded[..5].to_vec();
    hops.push(with_bodies(
        turn1,
        6,
        file("turn1_request.json"),
        spawning_answer(),
    ));
    hops.push(with_bodies(
        turn1,
        7,
        subagent_request("turn1_request.json"),
        file("turn1_response.sse"),
    ));
    hops.push(with_bodies(
        call,
        8,
        file("mcp_tools_call_request.json"),
        file("mcp_tools_call_response.json"),
    ));
    hops.push(with_bodies(
        turn2,
        9,
        subagent_request("turn2_request.json"),
        file("turn2_response.sse"),
    ));
    hops.push(with_bodies(
        turn2,
        10,
        main_second_request(),
        file("turn2_response.sse"),
    ));
    let base = hops[0].start.started_unix_ns;
    for (n, hop) in hops.iter_mut().enumerate() {
        let started = base + n as i64 * 100_000_000;
        hop.start.started_unix_ns = started;
        let end: &mut HopEnd = hop.end.as_mut().unwrap();
        end.response_head_unix_ns = Some(started + 10_000_000);
        end.response_first_byte_unix_ns = Some(started + 20_000_000);
        end.response_ended_unix_ns = Some(started + 50_000_000);
    }
    hops
}

async fn stored(dir: &std::path::Path, run: &[RecordedHop]) -> Store {
    let store = Store::open(&dir.join("t.db")).await.unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    for hop in run {
        let start: &HopStart = &hop.start;
        hops::insert_start(&mut conn, start).await.unwrap();
        assert!(
            hops::apply_end(&mut conn, hop.end.as_ref().unwrap())
                .await
                .unwrap()
        );
    }
    drop(conn);
    store
}

#[tokio::test]
async fn a_subagent_is_a_thread_of_its_own_linked_to_the_call_that_spawned_it() {
    if !has_agent("claude-code") {
        return;
    }
    one_trace_with_a_subagent_thread(&run()).await;
}

/// Claude Code 2.1.197 run for real with its `Agent` tool allowed, against the scripted
/// upstream's `--subagent` script (tests/fixtures/agents/claude-code-subagent/): the hops are
/// what crossed the wire, in the same order as the constructed run above.
#[tokio::test]
async fn a_recorded_claude_code_subagent_run_is_one_trace_with_its_thread() {
    assert!(
        has_agent("claude-code-subagent"),
        "the recorded run is kept"
    );
    let run = agent_hops("claude-code-subagent");
    assert_eq!(run.len(), 10);
    one_trace_with_a_subagent_thread(&run).await;
}

/// Hops 6 (the ask) and 10 (the answer) are the user's conversation; 7 and 9 the subagent's,
/// whose tool call 8 ran.
async fn one_trace_with_a_subagent_thread(run: &[RecordedHop]) {
    let dir = tempfile::tempdir().unwrap();
    let store = stored(dir.path(), run).await;
    correlate(&store, GroupOptions::default(), GroupScope::Rebuild)
        .await
        .unwrap();
    let traces = store.traces().await.unwrap();
    let requests: Vec<_> = traces.iter().filter(|t| t.kind == "request").collect();
    assert_eq!(
        requests.len(),
        1,
        "the subagent is inside the user's trace: {traces:#?}"
    );
    assert_eq!(
        requests[0].title.as_deref(),
        Some("Add buy milk to my notes")
    );
    let hops = load_trace(&store, &requests[0].id, Bodies::Kept)
        .await
        .unwrap()
        .hops;
    let ids: Vec<&str> = hops.iter().map(|h| h.start.id.as_str()).collect();
    for n in 6..=10 {
        assert!(
            ids.contains(&format!("{n:0>32}").as_str()),
            "hop {n} in {ids:?}"
        );
    }
    let messages = explain_trace(&hops);
    let of = |hop: usize, direction: Direction| {
        let id = format!("{hop:0>32}");
        messages
            .iter()
            .find(|m| m.hop_id == id && m.direction == direction && m.part.is_none())
            .unwrap()
    };
    let spawned = of(6, Direction::Response);
    assert!(
        spawned.summary.ends_with("· starts subagent 1"),
        "{}",
        spawned.summary
    );
    let prefix = format!(
        "subagent 1 (Add the note, asked in message {}): ",
        spawned.number
    );
    for hop in [7, 9] {
        for direction in [Direction::Request, Direction::Response] {
            let message = of(hop, direction);
            assert!(message.summary.starts_with(&prefix), "{}", message.summary);
            assert_eq!(message.side_call, None, "{}", message.summary);
        }
    }
    for message in [of(6, Direction::Request), of(10, Direction::Request)] {
        assert!(!message.summary.contains("subagent"), "{}", message.summary);
    }
    let subagent_call = of(7, Direction::Response);
    let tools_call = of(8, Direction::Request);
    assert!(
        subagent_call.links.contains(&tools_call.number),
        "the subagent's tool call is linked to its tools/call: {:?}",
        subagent_call.links
    );
    let log = HopLog::from_store(&store, &requests[0].id).await.unwrap();
    let text = log.to_json_pretty();
    assert!(text.contains(&prefix), "the hop log carries the thread");
}
