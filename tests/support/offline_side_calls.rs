//! Claude Code's buy-milk run (tests/fixtures/agents/claude-code/) as it goes with its account
//! endpoints unreachable (a firewall, an offline machine): the fixture's hops, and beside them
//! the five side calls Claude Code 2.1.197 makes to api.anthropic.com under `tracer run`, each
//! answered by tracer's own 502 (the body and error Codex's recorded OTLP call got when its host
//! could not be resolved, tests/fixtures/agents/codex/otlp/).
#![allow(dead_code)]

use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

use crate::agent_trace::{agent_dir, agent_hops};

/// The side calls: method, path, and when (ms after the run's first hop).
pub const SIDE_CALLS: [(&str, &str, i64); 5] = [
    ("GET", "/api/claude_cli/bootstrap?client=claude-cli", 5),
    ("GET", "/api/claude_code_penguin_mode", 10),
    ("GET", "/api/claude_code/organizations/metrics_enabled", 15),
    ("POST", "/api/eval/sdk-zAZezfDKGoZuXXKe", 20),
    ("POST", "/api/event_logging/v2/batch", 790),
];

/// What the upstream connection failed with (as recorded for Codex's unreachable host).
pub const UNREACHABLE: &str = "upstream request failed: client error (Connect): dns error: failed to lookup address information: Temporary failure in name resolution";

/// One side call of Claude Code to api.anthropic.com, answered by tracer's 502.
pub fn failed_side_call(index: usize, method: &str, path: &str, at: i64) -> RecordedHop {
    let id = format!("5{index:0>31}");
    let body = std::fs::read(agent_dir("codex").join("otlp/metrics_response.json"))
        .expect("the recorded 502 body");
    let body = String::from_utf8(body)
        .expect("UTF-8")
        .replace("ab.chatgpt.com", "api.anthropic.com");
    let request = if method == "POST" {
        br#"{"events":[]}"#.to_vec()
    } else {
        Vec::new()
    };
    RecordedHop {
        read: Default::default(),
        start: HopStart {
            id: id.clone(),
            route: "api.anthropic.com".into(),
            role: Role::Other,
            transport: Transport::Http,
            peer: "127.0.0.1:40002".into(),
            method: method.into(),
            path: path.into(),
            url: format!("https://api.anthropic.com{path}"),
            request_headers: vec![
                Header::new("user-agent", "claude-cli/2.1.197 (external, cli)"),
                Header::new("content-type", "application/json"),
                Header::new("host", "api.anthropic.com"),
            ],
            started_unix_ns: at,
            run_id: None,
        },
        end: Some(HopEnd {
            id,
            state: Some(HopState::Failed),
            status: Some(502),
            error: Some(UNREACHABLE.into()),
            response_headers: vec![Header::new("content-type", "application/json")],
            request_body: BodyCapture::whole(request),
            response_body: BodyCapture::whole(body.into_bytes()),
            response_head_unix_ns: Some(at + 2_000_000),
            response_first_byte_unix_ns: Some(at + 2_000_000),
            response_ended_unix_ns: Some(at + 3_000_000),
            ..HopEnd::default()
        }),
    }
}

/// The recorded run with its five side calls failed beside it, in start order.
pub fn claude_code_offline() -> Vec<RecordedHop> {
    let mut hops = agent_hops("claude-code");
    let first = hops[0].start.started_unix_ns;
    for (index, (method, path, ms)) in SIDE_CALLS.iter().enumerate() {
        hops.push(failed_side_call(
            index,
            method,
            path,
            first + ms * 1_000_000,
        ));
    }
    hops.sort_by_key(|hop| hop.start.started_unix_ns);
    hops
}

/// The claude-code run with its first answer's tool call renamed: the model asks for Claude
/// Code's own `Bash` (offered in the same request) instead of the notes server's append.
pub fn claude_code_calling_bash() -> Vec<RecordedHop> {
    let mut hops = agent_hops("claude-code");
    let answer = std::fs::read(agent_dir("claude-code").join("turn1_response.sse")).unwrap();
    let renamed = String::from_utf8(answer)
        .unwrap()
        .replace("\"name\":\"mcp__notes__append\"", "\"name\":\"Bash\"");
    for hop in &mut hops {
        let end = hop.end.as_mut().unwrap();
        if String::from_utf8_lossy(&end.response_body.bytes).contains("mcp__notes__append") {
            end.response_body = BodyCapture::whole(renamed.clone().into_bytes());
        }
    }
    hops
}
