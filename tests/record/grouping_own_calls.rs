//! Calls a caller makes by itself (REST calls to an OpenAPI tool server in front of MCP, a
//! program's own request) with no user request around them: each is a trace of its own, titled
//! by the call, and never joins the tool server's start-up trace.

use crate::trace_hops as support;

use serde_json::{Value, json};
use support::{buy, hop, inputs};
use tracer_trace::{GroupOptions, Reason, RecordedHop, TraceKind, group};
use tracer_wire::hop::{HopState, Role};

fn mcp(id: &str, start: i64, end: i64, request: Value, response: Value) -> RecordedHop {
    hop(id, Role::Mcp, "/mcp", start, end)
        .bodies(request, response)
        .done()
}

/// mcpo's start-up against the phonebook, then REST calls from a client tracer does not front,
/// seconds apart, each running as a `tools/call`; the last one the caller's own 422.
fn mcpo_session() -> Vec<RecordedHop> {
    let mut hops = vec![
        mcp(
            "11",
            0,
            5,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18"}}),
        ),
        mcp(
            "12",
            6,
            8,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "get_phonenumber"}]}}),
        ),
    ];
    let names = [
        "Ashley Johnson",
        "Joshua Wilson",
        "Emily Davis",
        "Ashley Johnson",
    ];
    for (i, name) in names.iter().enumerate() {
        let t = 8_000 + 9_000 * i as i64;
        let rest = format!("2{i}");
        hops.push(
            hop(&rest, Role::Other, "/phonebook/get_phonenumber", t, t + 40)
                .bodies(json!({"name": name}), json!("555-11111111"))
                .done(),
        );
        hops.push(mcp(
            &format!("3{i}"),
            t + 10,
            t + 30,
            json!({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": {"name": "get_phonenumber", "arguments": {"name": name}}}),
            json!({"jsonrpc": "2.0", "id": i + 2, "result": {"content": [{"type": "text", "text": "555-11111111"}], "isError": false}}),
        ));
    }
    // The caller's own mistake: a 422 from mcpo, no tools/call.
    let mut bad = hop(
        "29",
        Role::Other,
        "/phonebook/get_phonenumber",
        45_000,
        45_010,
    )
    .bodies(
        json!({"nam": "Ashley Johnson"}),
        json!({"detail": "missing name"}),
    )
    .done();
    if let Some(end) = bad.end.as_mut() {
        end.status = Some(422);
        end.state = Some(HopState::Complete);
    }
    hops.push(bad);
    hops
}

#[test]
fn each_rest_call_with_no_user_request_is_a_trace_of_its_own() {
    let hops = mcpo_session();
    let grouping = group(&inputs(&hops), GroupOptions::default());
    let setup = &grouping.traces[0];
    assert_eq!(setup.kind, TraceKind::Setup);
    assert_eq!(setup.hop_ids.len(), 2, "only the start-up: {setup:?}");
    let calls: Vec<_> = grouping.traces[1..].iter().collect();
    assert_eq!(calls.len(), 5, "{:#?}", grouping.traces);
    for (i, trace) in calls.iter().take(4).enumerate() {
        assert_eq!(trace.kind, TraceKind::Request);
        assert_eq!(
            trace.hop_ids,
            [
                hops[2 + 2 * i].start.id.clone(),
                hops[3 + 2 * i].start.id.clone()
            ],
            "the REST call and the tools/call it ran as"
        );
    }
    assert_eq!(
        calls[0].title.as_deref(),
        Some(r#"phonebook/get_phonenumber {"name":"Ashley Johnson"}"#)
    );
    assert_eq!(
        calls[4].title.as_deref(),
        Some(r#"phonebook/get_phonenumber {"nam":"Ashley Johnson"}"#)
    );
    let reasons: Vec<Reason> = grouping.assignments.iter().map(|a| a.reason).collect();
    assert_eq!(reasons[2], Reason::OwnCall);
    assert_eq!(
        reasons[3],
        Reason::Time,
        "the tools/call joins the call in flight"
    );
    // The same sessions all along: the calls are traces of mcpo's run, not new sessions.
    assert_eq!(grouping.sessions.len(), 1);
}

#[test]
fn a_programs_own_request_is_titled_by_what_it_asked_and_a_user_request_still_takes_calls() {
    let get = hop("41", Role::Other, "/?q=1", 0, 3)
        .bodies(Value::Null, json!("hello"))
        .done();
    let mut get = get;
    get.start.method = "GET".into();
    let grouping = group(&inputs(&[get]), GroupOptions::default());
    assert_eq!(grouping.traces.len(), 1);
    assert_eq!(grouping.traces[0].kind, TraceKind::Request);
    assert_eq!(
        grouping.traces[0].title.as_deref(),
        Some("GET 127.0.0.1:9/")
    );

    // Inside a user request (the buy-milk agent request in flight) a call joins it, as before.
    let mut hops = buy("5", "buy milk", 0);
    let during = hops[0].start.started_unix_ns / 1_000_000 - support::BASE / 1_000_000 + 1;
    hops.push(
        hop(
            "59",
            Role::Other,
            "/phonebook/get_phonenumber",
            during,
            during + 1,
        )
        .bodies(json!({"name": "x"}), json!("1"))
        .done(),
    );
    let grouping = group(&inputs(&hops), GroupOptions::default());
    assert_eq!(grouping.traces.len(), 1, "{:#?}", grouping.traces);
}
