//! Shared by the trace tests: hop records built in milliseconds, and the article's buy-milk walk.
#![allow(dead_code)]

use serde_json::{Value, json};
use tracer_live::load::LoadedTrace;
use tracer_store::traces::TraceRow;
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

pub const MS: i64 = 1_000_000;
pub const BASE: i64 = 1_800_000_000_000_000_000;

pub struct HopBuilder {
    pub hop: RecordedHop,
}

pub fn hop(id: &str, role: Role, path: &str, start_ms: i64, end_ms: i64) -> HopBuilder {
    let id = format!("{id:0>32}");
    HopBuilder {
        hop: RecordedHop {
            read: Default::default(),
            start: HopStart {
                id: id.clone(),
                route: role.as_str().into(),
                role,
                transport: Transport::Http,
                peer: if role == Role::Agent {
                    "127.0.0.1:40000"
                } else {
                    "127.0.0.1:40001"
                }
                .into(),
                method: "POST".into(),
                path: path.into(),
                url: format!("http://127.0.0.1:9{path}"),
                request_headers: vec![Header::new("content-type", "application/json")],
                started_unix_ns: BASE + start_ms * MS,
                run_id: None,
            },
            end: Some(HopEnd {
                id,
                state: Some(HopState::Complete),
                status: Some(200),
                response_headers: vec![Header::new("content-type", "application/json")],
                response_first_byte_unix_ns: Some(BASE + end_ms * MS - MS / 2),
                response_ended_unix_ns: Some(BASE + end_ms * MS),
                ..HopEnd::default()
            }),
        },
    }
}

impl HopBuilder {
    pub fn bodies(mut self, request: Value, response: Value) -> Self {
        if let Some(end) = self.hop.end.as_mut() {
            end.request_body = BodyCapture::whole(request.to_string().into_bytes());
            end.response_body = if response.is_null() {
                BodyCapture::default()
            } else {
                BodyCapture::whole(response.to_string().into_bytes())
            };
        }
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.hop
            .start
            .request_headers
            .push(Header::new(name, value));
        self
    }

    pub fn done(self) -> RecordedHop {
        self.hop
    }
}

pub fn tools() -> Value {
    json!(["append", "read", "write", "update", "clear"]
        .map(|name| json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})))
}

pub fn assistant_call(item: &str) -> Value {
    json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "append", "arguments": {"content": item}}}]})
}

/// The article's walk for one request, `item` added, starting at `t` ms; hop ids `{prefix}1..5`.
pub fn buy(prefix: &str, item: &str, t: i64) -> Vec<RecordedHop> {
    buy_slow(prefix, item, t, 0)
}

/// The same walk with each model call `slow` ms slower.
pub fn buy_slow(prefix: &str, item: &str, t: i64, slow: i64) -> Vec<RecordedHop> {
    let text = format!("Add {item} to my notes");
    let system = json!({"role": "system", "content": "You manage the user's notes."});
    let user = json!({"role": "user", "content": text});
    vec![
        hop(&format!("{prefix}1"), Role::Agent, "/agent", t, t + 1000 + 2 * slow)
            .bodies(json!({"message": text}), json!({"reply": format!("I've added \"{item}\"."), "tool_calls": [{"name": "append", "arguments": {"content": item}}]}))
            .done(),
        hop(&format!("{prefix}2"), Role::Mcp, "/mcp", t + 10, t + 20)
            .bodies(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "append"}, {"name": "read"}]}}))
            .done(),
        hop(&format!("{prefix}3"), Role::Model, "/api/chat", t + 30, t + 500 + slow)
            .bodies(
                json!({"model": "qwen2.5:7b", "messages": [system, user], "tools": tools(), "stream": false}),
                json!({"model": "qwen2.5:7b", "message": assistant_call(item), "done": true, "done_reason": "stop"}),
            )
            .done(),
        hop(&format!("{prefix}4"), Role::Mcp, "/mcp", t + 510 + slow, t + 520 + slow)
            .bodies(
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "append", "arguments": {"content": item}}}),
                json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Success"}], "isError": false}}),
            )
            .done(),
        hop(&format!("{prefix}5"), Role::Model, "/api/chat", t + 530 + slow, t + 900 + 2 * slow)
            .bodies(
                json!({"model": "qwen2.5:7b", "messages": [system, user, assistant_call(item), {"role": "tool", "content": "Success", "tool_name": "append"}], "tools": tools(), "stream": false}),
                json!({"model": "qwen2.5:7b", "message": {"role": "assistant", "content": format!("I've added \"{item}\".")}, "done": true, "done_reason": "stop"}),
            )
            .done(),
    ]
}

pub fn inputs(hops: &[RecordedHop]) -> Vec<tracer_trace::TraceInput> {
    hops.iter().map(RecordedHop::trace_input).collect()
}

/// These hops as one trace loaded for replay (`tracer_live::load::LoadedTrace`): a request
/// trace of that id and title, as grouping would store it, starting with its first hop.
pub fn loaded(trace_id: &str, title: Option<&str>, hops: Vec<RecordedHop>) -> LoadedTrace {
    LoadedTrace {
        row: TraceRow {
            id: trace_id.to_string(),
            title: title.map(str::to_string),
            kind: "request".to_string(),
            started_unix_ns: hops.first().map_or(0, |hop| hop.start.started_unix_ns),
            ended_unix_ns: None,
            created_by: tracer_live::correlate::CREATED_BY.to_string(),
        },
        session: None,
        hops,
    }
}
