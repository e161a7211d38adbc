//! Placing the agent's own events among a trace's hops: each rule, its order of trust, and the
//! events that are not this trace's.

use serde_json::{Value, json};
use tracer_wire::agent_event::{JoinKeys, Signal};
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, Role, Transport};

use super::*;

const SECOND: i64 = 1_000_000_000;

fn hop(
    id: &str,
    at: i64,
    request_headers: Vec<Header>,
    response_headers: Vec<Header>,
    answer: Value,
) -> RecordedHop {
    let mut response_headers = response_headers;
    response_headers.push(Header::new("content-type", "application/json"));
    RecordedHop {
        read: Default::default(),
        start: HopStart {
            id: id.into(),
            route: "model".into(),
            role: Role::Model,
            transport: Transport::Http,
            peer: "127.0.0.1:1".into(),
            method: "POST".into(),
            path: "/v1/messages".into(),
            url: "http://127.0.0.1:2/v1/messages".into(),
            request_headers: [vec![Header::new("content-type", "application/json")], request_headers].concat(),
            started_unix_ns: at,
            run_id: Some("run-1".into()),
        },
        end: Some(HopEnd {
            id: id.into(),
            status: Some(200),
            response_headers,
            request_body: BodyCapture::whole(br#"{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#.to_vec()),
            response_body: BodyCapture::whole(answer.to_string().into_bytes()),
            response_ended_unix_ns: Some(at + SECOND / 10),
            ..HopEnd::default()
        }),
    }
}

fn answer(tool: Option<&str>, input: u64, output: u64) -> Value {
    let content = match tool {
        Some(id) => {
            json!([{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "ls"}}])
        }
        None => json!([{"type": "text", "text": "done"}]),
    };
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": content, "stop_reason": "end_turn",
        "usage": {"input_tokens": input, "output_tokens": output}})
}

fn event(name: &str, at: i64, keys: JoinKeys, attributes: Value) -> AgentEvent {
    let list: Vec<Value> = (attributes.as_object().expect("object").iter())
        .map(|(k, v)| json!({"key": k, "value": {"stringValue": v.to_string().trim_matches('"')}}))
        .collect();
    AgentEvent {
        signal: Signal::Log,
        service: Some("claude-code".into()),
        name: name.into(),
        time_unix_ns: at,
        end_unix_ns: None,
        keys,
        record: json!({"log": {"attributes": list, "spanId": attributes.get("span").cloned().unwrap_or(json!(""))}}),
    }
}

fn trace() -> Vec<RecordedHop> {
    vec![
        hop(
            "h1",
            10 * SECOND,
            vec![],
            vec![Header::new("request-id", "req_1")],
            answer(Some("toolu_1"), 7, 3),
        ),
        hop(
            "h2",
            12 * SECOND,
            vec![Header::new(
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            )],
            vec![],
            answer(None, 11, 5),
        ),
    ]
}

fn bounds() -> TraceBounds {
    TraceBounds {
        session: Some("s-1".into()),
        runs: vec!["run-1".into()],
        from_ns: 0,
        to_ns: 20 * SECOND,
    }
}

#[test]
fn each_id_places_its_event_and_says_which() {
    let hops = trace();
    let keys = |f: fn(&mut JoinKeys)| {
        let mut k = JoinKeys {
            session: Some("s-1".into()),
            prompt: Some("p-1".into()),
            ..Default::default()
        };
        f(&mut k);
        k
    };
    let events = [
        event("user_prompt", 9 * SECOND, keys(|_| {}), json!({})),
        event(
            "api_request",
            10 * SECOND + 200,
            keys(|k| k.request = Some("req_1".into())),
            json!({}),
        ),
        event(
            "tool_result",
            11 * SECOND,
            keys(|k| k.tool_call = Some("toolu_1".into())),
            json!({}),
        ),
        event(
            "sse_event",
            12 * SECOND,
            keys(|_| {}),
            json!({"input_tokens": 11, "output_tokens": 5}),
        ),
        event(
            "api_request",
            12 * SECOND,
            JoinKeys::default(),
            json!({"span": "b7ad6b7169203331"}),
        ),
        event(
            "hook",
            11 * SECOND,
            JoinKeys {
                session: Some("s-1".into()),
                ..Default::default()
            },
            json!({}),
        ),
    ];
    let given: Vec<_> = events.iter().map(|e| (e, None)).collect();
    let placed = place(&hops, &given, &bounds());
    let by_event = |i: usize| placed.iter().find(|p| p.event == i).expect("placed");
    assert_eq!(
        (by_event(0).rule, by_event(0).after),
        (JoinRule::PromptId, None)
    );
    assert_eq!(
        (by_event(1).rule, by_event(1).of_hop),
        (JoinRule::RequestId, Some(0))
    );
    assert_eq!(
        (by_event(2).rule, by_event(2).after),
        (JoinRule::ToolCallId, Some(0))
    );
    assert_eq!(
        (by_event(3).rule, by_event(3).of_hop),
        (JoinRule::TokenTuple, Some(1))
    );
    assert_eq!(
        (by_event(4).rule, by_event(4).of_hop),
        (JoinRule::TraceContext, Some(1))
    );
    assert_eq!(
        (by_event(5).rule, by_event(5).after),
        (JoinRule::SessionTime, Some(0))
    );
    // In the order of their places.
    let order: Vec<usize> = placed.iter().map(|p| p.event).collect();
    assert_eq!(order, [0, 1, 2, 5, 3, 4]);
}

#[test]
fn events_of_another_session_or_outside_the_trace_are_left_out() {
    let hops = trace();
    let other = JoinKeys {
        session: Some("s-2".into()),
        ..Default::default()
    };
    let late = JoinKeys {
        session: Some("s-1".into()),
        ..Default::default()
    };
    let events = [
        event("hook", 11 * SECOND, other.clone(), json!({})),
        event("hook", 30 * SECOND, late, json!({})),
        event("hook", 11 * SECOND, JoinKeys::default(), json!({})),
    ];
    let given: Vec<_> = events.iter().map(|e| (e, Some("run-2"))).collect();
    assert_eq!(place(&hops, &given, &bounds()), []);
    // The same event without a session, arriving during this trace's run, is placed by the run.
    let given = [(&events[2], Some("run-1"))];
    let placed = place(&hops, &given, &bounds());
    assert_eq!(placed[0].rule, JoinRule::RunTime);
}

#[test]
fn an_answer_id_gemini_sends_is_read_from_its_body() {
    assert_eq!(
        response_id(br#"data: {"candidates":[],"responseId": "r-9"}"#).as_deref(),
        Some("r-9")
    );
    assert_eq!(response_id(b"{}"), None);
    assert_eq!(response_id(br#"{"responseId":""}"#), None);
}
