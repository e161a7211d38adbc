//! Conversations and side calls: which model requests of a trace extend one history (each one's
//! messages a prefix of the next), and which calls a host makes beside it (a title, a summary,
//! routing, a token count, a quota probe, its own telemetry, its account and feature flags), told
//! by their shape.

use super::request_anatomy::previous_of;
use crate::RecordedHop;
use tracer_wire::dialect::{Dialect, HopReading, ModelRequest, Reading};
use tracer_wire::hop::HopStart;

// What a side call is: defined beside the agents' own endpoints, which name most kinds.
pub use super::agent_endpoints::SideCall;

/// The path without its query, lower case.
fn bare_path(start: &HopStart) -> String {
    let path = start.path.split('?').next().unwrap_or_default();
    path.to_ascii_lowercase()
}

/// What a host's housekeeping request does, in a few words, told by its path: open-webui's own
/// API (`/api/v1/auths/signin`, `/api/models`, `/api/v1/configs/…`) and Ollama's model list,
/// loaded models and version (`/api/tags`, `/api/ps`, `/api/version`, `/api/show`). None for
/// a conversation (`/api/chat`, `/api/chat/completions`) and every other path.
pub(crate) fn housekeeping_of(start: &HopStart) -> Option<&'static str> {
    let path = bare_path(start);
    let path = path.trim_end_matches('/');
    let words = match path {
        "/api/tags" => "the model server's model list",
        "/api/ps" => "the models the model server has loaded",
        "/api/version" => "the model server's version",
        "/api/show" => "a model's details",
        "/api/models" | "/api/v1/models" => "the models it offers",
        "/api/config" => "its own settings",
        _ if path.starts_with("/api/v1/auths") => "signing up or in",
        _ if path.starts_with("/api/v1/configs/tool_servers") => "configuring its tool servers",
        _ if path.starts_with("/api/v1/tools") => "listing its tools",
        _ if path.starts_with("/api/v1/") => "its own settings",
        _ => return None,
    };
    Some(words)
}

/// What a hop is by its own shape alone (path, dialect, the request's own words), if a side call.
pub(crate) fn side_call_by_shape(start: &HopStart, reading: &HopReading) -> Option<SideCall> {
    if housekeeping_of(start).is_some() {
        return Some(SideCall::Housekeeping);
    }
    if let Some(endpoint) = super::agent_endpoints::agent_endpoint(start) {
        return Some(endpoint.kind);
    }
    let path = bare_path(start);
    let telemetry = ["/v1/metrics", "/v1/traces", "/v1/logs"]
        .iter()
        .any(|end| path.ends_with(end))
        || ["/analytics", "/telemetry", "event_logging", "/otlp/"]
            .iter()
            .any(|part| path.contains(part));
    if telemetry {
        return Some(SideCall::Telemetry);
    }
    if reading.dialect == Dialect::GeminiCountTokens
        || path.contains("count_tokens")
        || path.contains("counttokens")
    {
        return Some(SideCall::CountTokens);
    }
    if path.contains("quota") || path.ends_with("/usage") {
        return Some(SideCall::Quota);
    }
    match &reading.request.reading {
        Reading::ModelRequest(request) => model_side_call(request),
        _ => None,
    }
}

/// A model request that offers no tools and says, in the host's own words or the answer format
/// it asks for, that it wants a title, a summary or a routing choice.
fn model_side_call(request: &ModelRequest) -> Option<SideCall> {
    if !request.tools.is_empty() || request.messages.is_empty() {
        return None;
    }
    let system = request.system.as_deref().unwrap_or_default().to_lowercase();
    let format = request.answer_format.as_deref().unwrap_or_default();
    let asks = |words: &[&str]| words.iter().any(|w| system.contains(w));
    if asks(&[
        "title generator",
        "generate a title",
        "a title for",
        "a concise title",
    ]) || format.contains("(title")
    {
        return Some(SideCall::Title);
    }
    if asks(&["summarize", "summarise", "write a summary"]) || format.contains("summary") {
        return Some(SideCall::Summary);
    }
    request.is_side_request().then_some(SideCall::Routing)
}

/// A trace's model requests placed: per hop (in the order given), the side call it is, and for
/// a request of a conversation the hop of the previous request of that conversation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conversations {
    side: Vec<Option<SideCall>>,
    previous: Vec<Option<usize>>,
}

impl Conversations {
    /// Places a trace's hops (any order; `readings[i]` is the reading of `hops[i]`).
    pub fn of_trace(hops: &[RecordedHop], readings: &[HopReading]) -> Self {
        let count = hops.len().min(readings.len());
        let mut side: Vec<Option<SideCall>> = (0..count)
            .map(|i| side_call_by_shape(&hops[i].start, &readings[i]))
            .collect();
        let mut previous = vec![None; count];
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by_key(|&i| hops[i].start.started_unix_ns);
        let request = |i: usize| match &readings[i].request.reading {
            Reading::ModelRequest(request) if !request.messages.is_empty() => Some(request),
            _ => None,
        };
        let in_conversation: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| side[i].is_none() && request(i).is_some())
            .collect();
        let mut earlier: Vec<&ModelRequest> = Vec::new();
        let mut earlier_hops: Vec<usize> = Vec::new();
        for &index in &in_conversation {
            let Some(this) = request(index) else { continue };
            if let Some(found) = previous_of(this, &earlier) {
                previous[index] = earlier
                    .iter()
                    .position(|e| std::ptr::eq(*e, found))
                    .map(|at| earlier_hops[at]);
            }
            earlier.push(this);
            earlier_hops.push(index);
        }
        // A request that offers no tools, continues no conversation and is continued by none,
        // beside a conversation that offers tools, is a call of the host's own.
        let offers_tools = in_conversation
            .iter()
            .any(|&i| request(i).is_some_and(|r| !r.tools.is_empty()));
        if offers_tools {
            for &index in &in_conversation {
                let continued = previous.contains(&Some(index));
                let alone = previous[index].is_none() && !continued;
                if alone && request(index).is_some_and(|r| r.tools.is_empty()) {
                    side[index] = Some(SideCall::Aside);
                }
            }
        }
        Self { side, previous }
    }

    /// The side call hop `index` is, if it is one.
    pub fn side_call(&self, index: usize) -> Option<SideCall> {
        self.side.get(index).copied().flatten()
    }

    /// The hop of the previous request of the conversation hop `index` continues.
    pub(crate) fn previous(&self, index: usize) -> Option<usize> {
        self.previous.get(index).copied().flatten()
    }
}
