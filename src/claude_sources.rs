//! What Claude Code records of a run without a proxy or a CA, read into tracer's records: its
//! session transcript (`~/.claude/projects/…/SESSION.jsonl`) and the raw API bodies of
//! `OTEL_LOG_RAW_API_BODIES=file:DIR`. Each model call becomes a hop (as the source has it, what
//! it cannot know said in the hop's note), each tool the host ran itself an agent event; a call
//! whose request id the database already holds from the wire is not added again, only joined.

pub mod bodies;
pub mod store;
pub mod transcript;

use serde_json::Value;
use tracer_wire::agent_event::{AgentEvent, JoinKeys};
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

/// One model call read from a source.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceCall {
    /// The API's request id (`request-id`), when the source names it.
    pub request_id: Option<String>,
    pub session_id: Option<String>,
    /// The request body as the source has it.
    pub request: Value,
    /// The assembled answer (a Messages API message).
    pub response: Value,
    /// When the call was sent and answered, as near as the source says (write times).
    pub started_unix_ns: i64,
    pub ended_unix_ns: i64,
    /// What the source cannot know, for the hop's note.
    pub note: String,
}

impl SourceCall {
    /// The call as a hop of the Anthropic Messages API: POST /v1/messages to
    /// api.anthropic.com, the session in `x-claude-code-session-id`, the request id in the
    /// answer's `request-id`, a plain JSON answer.
    pub fn hop(&self) -> (HopStart, HopEnd) {
        let id = tracer_wire::ids::random_hex_id(16);
        let json_type = Header::new("content-type", "application/json");
        let mut request_headers = vec![json_type.clone()];
        if let Some(session) = &self.session_id {
            request_headers.push(Header::new("x-claude-code-session-id", session.as_bytes()));
        }
        let mut response_headers = vec![json_type];
        if let Some(request_id) = &self.request_id {
            response_headers.push(Header::new("request-id", request_id.as_bytes()));
        }
        let start = HopStart {
            id: id.clone(),
            route: "api.anthropic.com".into(),
            role: Role::Model,
            transport: Transport::Http,
            peer: "claude-code".into(),
            method: "POST".into(),
            path: "/v1/messages".into(),
            url: "https://api.anthropic.com/v1/messages".into(),
            request_headers,
            started_unix_ns: self.started_unix_ns,
            run_id: None,
        };
        let ended = self.ended_unix_ns.max(self.started_unix_ns);
        let end = HopEnd {
            id,
            state: Some(HopState::Complete),
            status: Some(200),
            response_headers,
            request_body: BodyCapture::whole(self.request.to_string().into_bytes()),
            response_body: BodyCapture::whole(self.response.to_string().into_bytes()),
            request_ended_unix_ns: Some(self.started_unix_ns),
            response_head_unix_ns: Some(ended),
            response_first_byte_unix_ns: Some(ended),
            response_ended_unix_ns: Some(ended),
            note: Some(self.note.clone()),
            ..HopEnd::default()
        };
        (start, end)
    }
}

/// An agent event read from a source (a tool the host ran, the user's prompt), in the shape
/// the receiver stores, so it is placed and explained like any other; `keys` add to those the
/// attributes carry (the session, the prompt).
pub fn source_event(
    name: &str,
    service: &str,
    at_unix_ns: i64,
    keys: JoinKeys,
    attributes: &[(&str, Value)],
) -> AgentEvent {
    let mut flat: serde_json::Map<String, Value> = (attributes.iter())
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    if let Some(session) = keys.session {
        flat.entry("session.id").or_insert(Value::String(session));
    }
    if let Some(prompt) = keys.prompt {
        flat.entry("prompt.id").or_insert(Value::String(prompt));
    }
    if let Some(call) = keys.tool_call {
        flat.entry("tool_use_id").or_insert(Value::String(call));
    }
    AgentEvent::from_attributes(service, name, at_unix_ns, &flat)
}
