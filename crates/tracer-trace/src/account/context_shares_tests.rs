//! Tests of the context shares on Claude Code's recorded requests: the parts add up to the body,
//! the notes server's tools are told apart from the host's, the shares sum to the reported input.

use super::*;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, Role, Transport};

const TURN1: &[u8] =
    include_bytes!("../../../../tests/fixtures/agents/claude-code/turn1_request.json");
const TURN1_SSE: &[u8] =
    include_bytes!("../../../../tests/fixtures/agents/claude-code/turn1_response.sse");
const TURN2: &[u8] =
    include_bytes!("../../../../tests/fixtures/agents/claude-code/turn2_request.json");
const TURN2_SSE: &[u8] =
    include_bytes!("../../../../tests/fixtures/agents/claude-code/turn2_response.sse");
const LIST: &[u8] =
    include_bytes!("../../../../tests/fixtures/agents/claude-code/mcp_tools_list_request.json");
const LISTED: &[u8] =
    include_bytes!("../../../../tests/fixtures/agents/claude-code/mcp_tools_list_response.json");

fn hop(
    id: &str,
    at_ms: i64,
    role: Role,
    path: &str,
    request: &[u8],
    response: &[u8],
    stream: bool,
) -> RecordedHop {
    let kind = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    RecordedHop {
        read: Default::default(),
        start: HopStart {
            id: id.into(),
            route: if role == Role::Mcp { "notes" } else { "model" }.into(),
            role,
            transport: Transport::Http,
            peer: "127.0.0.1:1".into(),
            method: "POST".into(),
            path: path.into(),
            url: format!("http://127.0.0.1:2{path}"),
            request_headers: vec![Header::new("content-type", "application/json")],
            started_unix_ns: at_ms * 1_000_000,
            run_id: None,
        },
        end: Some(HopEnd {
            id: id.into(),
            status: Some(200),
            response_headers: vec![Header::new("content-type", kind)],
            request_body: BodyCapture::whole(request.to_vec()),
            response_body: BodyCapture::whole(response.to_vec()),
            ..HopEnd::default()
        }),
    }
}

pub(crate) fn claude_code_run() -> Vec<RecordedHop> {
    vec![
        hop("l1", 0, Role::Mcp, "/mcp", LIST, LISTED, false),
        hop(
            "t1",
            10,
            Role::Model,
            "/v1/messages",
            TURN1,
            TURN1_SSE,
            true,
        ),
        hop(
            "t2",
            20,
            Role::Model,
            "/v1/messages",
            TURN2,
            TURN2_SSE,
            true,
        ),
    ]
}

#[test]
fn the_parts_add_up_to_the_body_and_the_tools_are_told_by_origin() {
    let shares = context_shares(&claude_code_run());
    assert_eq!(shares.len(), 2);
    let first = &shares[0];
    assert_eq!(first.total_bytes, TURN1.len());
    assert_eq!(
        first.parts.iter().map(|p| p.bytes).sum::<usize>(),
        TURN1.len(),
        "{:#?}",
        first.parts
    );
    let labels: Vec<&str> = first.parts.iter().map(|p| p.label.as_str()).collect();
    assert!(labels.contains(&"tools: the host's (24)"), "{labels:?}");
    assert!(labels.contains(&"tools: notes (mcp, 5)"), "{labels:?}");
    assert!(labels.contains(&"system block 1"), "{labels:?}");
    assert!(labels.contains(&"history: user"), "{labels:?}");
    assert_eq!(first.prompt_tokens, Some(39616));
    assert_eq!(first.new_since_previous, None);
    // The shares add up to the reported input, up to rounding.
    let shared: u64 = first
        .parts
        .iter()
        .filter_map(|p| first.share(p.bytes))
        .sum();
    assert!(
        shared.abs_diff(39616) <= first.parts.len() as u64,
        "{shared}"
    );
    let lines = first.lines();
    assert!(lines[0].starts_with("context, "), "{lines:?}");
    assert!(lines[0].contains("in 39,616 tokens (≈ shares"), "{lines:?}");
    assert!(lines.iter().skip(1).all(|l| l.contains("≈ ")), "{lines:?}");
}

#[test]
fn the_second_request_says_what_is_new_and_carries_the_tool_call_and_its_result() {
    let shares = context_shares(&claude_code_run());
    let second = &shares[1];
    assert_eq!(
        second.parts.iter().map(|p| p.bytes).sum::<usize>(),
        TURN2.len()
    );
    let (new, bytes) = second.new_since_previous.expect("a previous request");
    assert_eq!(
        new, 2,
        "the answer that called the tool and the tool's result"
    );
    assert!(bytes > 0);
    let labels: Vec<&str> = second.parts.iter().map(|p| p.label.as_str()).collect();
    assert!(labels.contains(&"history: tool results"), "{labels:?}");
    assert!(labels.contains(&"history: assistant"), "{labels:?}");
    assert_eq!(second.prompt_tokens, Some(35391));
}

/// An agent's recorded run: its `tools/list`, then its model turns (`(request, answer)` files,
/// streamed), on `path`, 10 ms apart.
fn agent_run(list: &[u8], listed: &[u8], path: &str, turns: &[(&[u8], &[u8])]) -> Vec<RecordedHop> {
    let mut hops = vec![hop("l1", 0, Role::Mcp, "/mcp", list, listed, false)];
    for (n, (request, answer)) in turns.iter().enumerate() {
        let id = format!("t{}", n + 1);
        let at = 10 * (n as i64 + 1);
        hops.push(hop(&id, at, Role::Model, path, request, answer, true));
    }
    hops
}

macro_rules! fixture {
    ($agent:literal, $file:literal) => {
        include_bytes!(concat!(
            "../../../../tests/fixtures/agents/",
            $agent,
            "/",
            $file
        ))
        .as_slice()
    };
}

#[test]
fn codexs_namespace_of_mcp_tools_is_the_notes_servers_and_the_parts_add_up() {
    let hops = agent_run(
        fixture!("codex", "mcp_tools_list_request.json"),
        fixture!("codex", "mcp_tools_list_response.json"),
        "/v1/responses",
        &[
            (
                fixture!("codex", "turn1_request.json"),
                fixture!("codex", "turn1_response.sse"),
            ),
            (
                fixture!("codex", "turn2_request.json"),
                fixture!("codex", "turn2_response.sse"),
            ),
        ],
    );
    let shares = context_shares(&hops);
    assert_eq!(shares.len(), 2);
    for (share, body) in shares.iter().zip([
        fixture!("codex", "turn1_request.json"),
        fixture!("codex", "turn2_request.json"),
    ]) {
        assert_eq!(
            share.parts.iter().map(|p| p.bytes).sum::<usize>(),
            body.len()
        );
    }
    let labels: Vec<&str> = shares[0].parts.iter().map(|p| p.label.as_str()).collect();
    // The five notes tools inside the `mcp__notes` namespace entry are the server's.
    assert!(labels.contains(&"tools: notes (mcp, 5)"), "{labels:?}");
    assert!(
        labels.iter().any(|l| l.starts_with("tools: the host's (")),
        "{labels:?}"
    );
    assert!(shares[1].new_since_previous.is_some_and(|(n, _)| n >= 2));
    // Each call has a cache verdict from the usage it reported.
    let reports = crate::account::cache_verdict::cache_reports(&hops);
    assert_eq!(reports.len(), 2, "{reports:?}");
}

#[test]
fn opencodes_title_request_is_no_ones_previous_and_its_prefixed_tools_are_the_servers() {
    let mut hops = agent_run(
        fixture!("opencode", "mcp_tools_list_request.json"),
        fixture!("opencode", "mcp_tools_list_response.json"),
        "/v1/chat/completions",
        &[
            (
                fixture!("opencode", "turn1_request.json"),
                fixture!("opencode", "turn1_response.sse"),
            ),
            (
                fixture!("opencode", "turn2_request.json"),
                fixture!("opencode", "turn2_response.sse"),
            ),
        ],
    );
    // The title generator's request goes first, as opencode sends it.
    hops.insert(
        0,
        hop(
            "s1",
            -5,
            Role::Model,
            "/v1/chat/completions",
            fixture!("opencode", "side1_request.json"),
            fixture!("opencode", "side1_response.sse"),
            true,
        ),
    );
    let shares = context_shares(&hops);
    let turn1 = shares.iter().find(|s| s.hop_id == "t1").unwrap();
    let turn2 = shares.iter().find(|s| s.hop_id == "t2").unwrap();
    let labels: Vec<&str> = turn1.parts.iter().map(|p| p.label.as_str()).collect();
    assert!(labels.contains(&"tools: notes (mcp, 5)"), "{labels:?}");
    assert!(labels.contains(&"tools: the host's (10)"), "{labels:?}");
    assert_eq!(
        turn1.parts.iter().map(|p| p.bytes).sum::<usize>(),
        fixture!("opencode", "turn1_request.json").len()
    );
    // The first loop request follows the title call but does not continue it.
    assert_eq!(turn1.new_since_previous, None);
    assert!(
        turn2.new_since_previous.is_some_and(|(n, _)| n >= 2),
        "{turn2:?}"
    );
}
