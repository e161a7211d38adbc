//! Sessions, pure: one run of a host per session, from the host's own id or the MCP start-up
//! that begins a process; traces never cross sessions, whatever their text.

use serde_json::{Value, json};
use tracer_trace::{GroupOptions, Grouping, RecordedHop, group};
use tracer_wire::hop::{Role, Transport};

use crate::trace_hops::{assistant_call, hop, inputs, tools};

/// One run of a host without an agent route: MCP start-up, then the loop ("Add milk"),
/// starting at `t` ms; hop ids `{prefix}1..6`; model hops carry `host` as `session-id`.
fn run(prefix: &str, t: i64, host: Option<&str>) -> Vec<RecordedHop> {
    let user = json!({"role": "user", "content": "Add milk to my notes"});
    let model = |id: &str, start: i64, end: i64, messages: Value, answer: Value| {
        let built = hop(id, Role::Model, "/v1/chat/completions", start, end).bodies(
            json!({"model": "m", "messages": messages, "tools": tools()}),
            json!({"choices": [{"message": answer, "finish_reason": "stop"}]}),
        );
        match host {
            Some(host) => built.header("session-id", host).done(),
            None => built.done(),
        }
    };
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "append", "arguments": "{\"content\":\"milk\"}"}}]});
    vec![
        hop(&format!("{prefix}1"), Role::Mcp, "/mcp", t, t + 2)
            .bodies(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}), json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18"}}))
            .done(),
        hop(&format!("{prefix}2"), Role::Mcp, "/mcp", t + 3, t + 5)
            .bodies(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "append"}]}}))
            .done(),
        model(&format!("{prefix}3"), t + 50, t + 80, json!([user]), call.clone()),
        hop(&format!("{prefix}4"), Role::Mcp, "/mcp", t + 90, t + 95)
            .bodies(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "append", "arguments": {"content": "milk"}}}), json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Success"}], "isError": false}}))
            .done(),
        model(
            &format!("{prefix}5"),
            t + 100,
            t + 130,
            json!([user, call, {"role": "tool", "tool_call_id": "c1", "content": "Success"}]),
            json!({"role": "assistant", "content": "Done."}),
        ),
        {
            let mut delete = hop(&format!("{prefix}6"), Role::Mcp, "/mcp", t + 140, t + 142).done();
            delete.start.method = "DELETE".into();
            delete
        },
    ]
}

/// trace id → the hop-id suffixes it holds, sorted.
fn traces(grouping: &Grouping) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = grouping
        .traces
        .iter()
        .map(|t| {
            let mut hops: Vec<String> = grouping
                .assignments
                .iter()
                .filter(|a| a.trace_id == t.id)
                .map(|a| a.hop_id.trim_start_matches('0').to_string())
                .collect();
            hops.sort();
            hops
        })
        .collect();
    out.sort();
    out
}

fn setup_and_request(prefix: &str) -> [Vec<String>; 2] {
    let ids = |range: std::ops::RangeInclusive<u8>| -> Vec<String> {
        range.map(|i| format!("{prefix}{i}")).collect()
    };
    [ids(1..=2), ids(3..=6)]
}

#[test]
fn runs_back_to_back_with_the_same_text_are_sessions_of_their_own() {
    for host in [None, Some(["a1a1", "b2b2", "c3c3"])] {
        let mut hops = Vec::new();
        for (index, prefix) in ["7", "8", "9"].iter().enumerate() {
            let t = index as i64 * 1500;
            hops.extend(run(prefix, t, host.map(|h| h[index])));
        }
        let grouping = group(&inputs(&hops), GroupOptions::default());
        let mut expected: Vec<Vec<String>> = ["7", "8", "9"]
            .iter()
            .flat_map(|p| setup_and_request(p))
            .collect();
        expected.sort();
        assert_eq!(traces(&grouping), expected, "host ids {host:?}");
        assert_eq!(grouping.sessions.len(), 3, "host ids {host:?}");
        let named: Vec<Option<&str>> = grouping
            .sessions
            .iter()
            .map(|s| s.host_session.as_deref())
            .collect();
        match host {
            Some(ids) => assert_eq!(named, ids.map(Some)),
            None => assert_eq!(named, [None, None, None]),
        }
        for trace in &grouping.traces {
            let session = trace.session_id.as_deref().expect("a session");
            assert!(grouping.sessions.iter().any(|s| s.id == session));
        }
    }
}

#[test]
fn the_hosts_own_id_keeps_overlapping_runs_apart() {
    // Two runs of one host at once, same text: only the host's id tells their model hops apart.
    let mut hops = run("5", 0, Some("first"));
    let mut second = run("6", 60, Some("second"));
    // The second run's MCP hops are its own process, on another connection.
    for hop in &mut second {
        hop.start.peer = "127.0.0.1:40002".into();
    }
    hops.append(&mut second);
    let grouping = group(&inputs(&hops), GroupOptions::default());
    let of = |suffix: &str| {
        grouping
            .assignments
            .iter()
            .find(|a| a.hop_id.ends_with(suffix))
            .map(|a| a.trace_id.clone())
    };
    assert_eq!(of("53"), of("55"), "run 1's loop is one trace");
    assert_eq!(
        of("53"),
        of("54"),
        "run 1's tool call, on run 1's connection, is in it"
    );
    assert_eq!(of("63"), of("64"), "run 2's tool call is in run 2's");
    assert_eq!(of("63"), of("65"), "run 2's loop is one trace");
    assert_ne!(of("53"), of("63"), "the runs' loops are apart");
    assert_eq!(grouping.sessions.len(), 2);
}

#[test]
fn a_stdio_server_wrapped_by_the_host_is_in_the_hosts_session() {
    // `tracer wrap` hops have the command as their peer: they are still the host's session.
    let mut hops = run("4", 0, None);
    for hop in hops.iter_mut().filter(|h| h.start.role == Role::Mcp) {
        hop.start.transport = Transport::Stdio;
        hop.start.peer = "notes-server --stdio".into();
    }
    let grouping = group(&inputs(&hops), GroupOptions::default());
    assert_eq!(traces(&grouping), setup_and_request("4"));
    assert_eq!(grouping.sessions.len(), 1);
}

#[test]
fn model_calls_without_mcp_start_up_stay_in_one_session() {
    // A host that never initializes a server (an Ollama loop): one session, a trace per request.
    let hops: Vec<RecordedHop> = ["Add eggs", "Add milk"]
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let t = index as i64 * 5000;
            hop(&format!("3{index}"), Role::Model, "/api/chat", t, t + 100)
                .bodies(
                    json!({"model": "m", "messages": [{"role": "user", "content": text}]}),
                    json!({"message": assistant_call("x"), "done": true}),
                )
                .done()
        })
        .collect();
    let grouping = group(&inputs(&hops), GroupOptions::default());
    assert_eq!(grouping.traces.len(), 2);
    assert_eq!(grouping.sessions.len(), 1);
}
