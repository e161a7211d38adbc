//! Tests of the context shares on Claude Code's recorded requests: the parts add up to the body,
//! the notes server's tools are told apart from the host's, the shares sum to the reported input.

use super::*;
use crate::hop::{BodyCapture, Header, HopEnd, HopStart, Role, Transport};

const TURN1: &[u8] = include_bytes!("../../tests/fixtures/agents/claude-code/turn1_request.json");
const TURN1_SSE: &[u8] =
    include_bytes!("../../tests/fixtures/agents/claude-code/turn1_response.sse");
const TURN2: &[u8] = include_bytes!("../../tests/fixtures/agents/claude-code/turn2_request.json");
const TURN2_SSE: &[u8] =
    include_bytes!("../../tests/fixtures/agents/claude-code/turn2_response.sse");
const LIST: &[u8] =
    include_bytes!("../../tests/fixtures/agents/claude-code/mcp_tools_list_request.json");
const LISTED: &[u8] =
    include_bytes!("../../tests/fixtures/agents/claude-code/mcp_tools_list_response.json");

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
