//! The agent's own account joined to the wire: each telemetry event the agent exported placed in
//! a trace at the step it happened, by the ids the two share, in this order of trust: the API
//! request's id (the answer's `request-id` header), the tool call's id (the model's `tool_use`),
//! the token tuple of one answer, a prompt id shared with an event placed so, and last the
//! session and time. The rule that decided is kept with each placement.

use std::collections::HashMap;

use tracer_wire::agent_event::AgentEvent;
use tracer_wire::dialect::Reading;

use crate::read::recorded_hop::RecordedHop;

/// Why an event was placed where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JoinRule {
    /// Its `request_id` is the `request-id` the API answered this hop with (or its response id
    /// the answer's own `responseId`).
    RequestId,
    /// Its span is the one the hop's `traceparent` header names (Codex).
    TraceContext,
    /// Its tool call id is one the model asked for in this trace.
    ToolCallId,
    /// Its input and output tokens are exactly one answer's in this trace.
    TokenTuple,
    /// It shares its prompt id with an event placed by an id.
    PromptId,
    /// Its session is this trace's and its time is within the trace's.
    SessionTime,
    /// It arrived during the `tracer run` of this trace, within the trace's time.
    RunTime,
}

impl JoinRule {
    pub fn as_str(self) -> &'static str {
        match self {
            JoinRule::RequestId => "request id",
            JoinRule::TraceContext => "trace context",
            JoinRule::ToolCallId => "tool call id",
            JoinRule::TokenTuple => "token tuple",
            JoinRule::PromptId => "prompt id",
            JoinRule::SessionTime => "session and time",
            JoinRule::RunTime => "run and time",
        }
    }
}

/// One event at its place: after hop `after` (None: before the trace's first hop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// Its index in the events given.
    pub event: usize,
    pub after: Option<usize>,
    /// The hop it is the agent's account of (an `api_request` of this very call).
    pub of_hop: Option<usize>,
    pub rule: JoinRule,
}

/// How an event can be a trace's without an id: its session or run, and the time window.
#[derive(Debug, Clone, Default)]
pub struct TraceBounds {
    /// The host's session id of this trace, when its hops named one.
    pub session: Option<String>,
    /// The `tracer run` ids of its hops.
    pub runs: Vec<String>,
    /// Events without an id are this trace's only between these (ns, inclusive).
    pub from_ns: i64,
    pub to_ns: i64,
}

/// The events (with the run each arrived during) placed in a trace of `hops`, in the agent's
/// order; those that join nothing here are left out (another trace's, or unplaced).
pub fn place(
    hops: &[RecordedHop],
    events: &[(&AgentEvent, Option<&str>)],
    bounds: &TraceBounds,
) -> Vec<Placed> {
    let ids = WireIds::of(hops);
    let mut placed: Vec<Placed> = Vec::new();
    let mut prompts: HashMap<&str, ()> = HashMap::new();
    let mut rest = Vec::new();
    for (index, (event, _)) in events.iter().enumerate() {
        let keys = &event.keys;
        let by_request = keys
            .request
            .as_deref()
            .and_then(|r| ids.requests.get(r).copied());
        let by_tool = keys
            .tool_call
            .as_deref()
            .and_then(|t| ids.tool_calls.get(t).copied());
        let by_span = span_of(event).and_then(|s| ids.spans.get(&s).copied());
        let by_tokens = tokens_of(event).and_then(|t| ids.unique_tokens.get(&t).copied());
        let found = match (by_request.or(by_span), by_tool, by_tokens) {
            (Some(hop), _, _) if by_request.is_some() => {
                Some((JoinRule::RequestId, Some(hop), hop))
            }
            (Some(hop), _, _) => Some((JoinRule::TraceContext, Some(hop), hop)),
            (None, Some(asked), _) => {
                Some((JoinRule::ToolCallId, None, after_time(hops, event, asked)))
            }
            (None, None, Some(hop)) => Some((JoinRule::TokenTuple, Some(hop), hop)),
            _ => None,
        };
        match found {
            Some((rule, of_hop, after)) => {
                if let Some(prompt) = keys.prompt.as_deref() {
                    prompts.insert(prompt, ());
                }
                placed.push(Placed {
                    event: index,
                    after: Some(after),
                    of_hop,
                    rule,
                });
            }
            None => rest.push(index),
        }
    }
    for index in rest {
        let (event, run) = events[index];
        let in_time = (bounds.from_ns..=bounds.to_ns).contains(&event.time_unix_ns);
        let same_session = bounds.session.is_some() && event.keys.session == bounds.session;
        let rule = if event
            .keys
            .prompt
            .as_deref()
            .is_some_and(|p| prompts.contains_key(p))
        {
            Some(JoinRule::PromptId)
        } else if same_session && in_time {
            Some(JoinRule::SessionTime)
        } else if (event.keys.session.is_none() || bounds.session.is_none())
            && run.is_some_and(|r| bounds.runs.iter().any(|own| own == r))
            && in_time
        {
            Some(JoinRule::RunTime)
        } else {
            None
        };
        if let Some(rule) = rule {
            let after = last_started_before(hops, event.time_unix_ns);
            placed.push(Placed {
                event: index,
                after,
                of_hop: None,
                rule,
            });
        }
    }
    placed.sort_by_key(|p| {
        (
            p.after.map_or(0, |a| a + 1),
            events[p.event].0.time_unix_ns,
            p.event,
        )
    });
    placed
}

/// The ids the wire carries in a trace's hops, each to the hop that carries it.
#[derive(Default)]
struct WireIds {
    /// An answer's `request-id` (Anthropic) or `x-request-id` (OpenAI) header.
    requests: HashMap<String, usize>,
    /// The span id of a request's `traceparent` header.
    spans: HashMap<String, usize>,
    /// A tool call the model asked for, to the hop whose answer asked.
    tool_calls: HashMap<String, usize>,
    /// (input, output) tokens found on one answer only.
    unique_tokens: HashMap<(u64, u64), usize>,
}

impl WireIds {
    fn of(hops: &[RecordedHop]) -> WireIds {
        let mut ids = WireIds::default();
        let mut tokens: HashMap<(u64, u64), Option<usize>> = HashMap::new();
        for (index, hop) in hops.iter().enumerate() {
            for header in &hop.start.request_headers {
                if header.name.eq_ignore_ascii_case("traceparent")
                    && let Ok(text) = std::str::from_utf8(&header.value)
                    && let Ok(parent) = tracer_wire::trace_context::TraceParent::parse(text)
                {
                    ids.spans.insert(parent.parent_id_hex(), index);
                }
            }
            let Some(end) = &hop.end else { continue };
            if let Some(id) = response_id(&end.response_body.bytes) {
                ids.requests.entry(id).or_insert(index);
            }
            for header in &end.response_headers {
                let name = header.name.to_ascii_lowercase();
                if matches!(name.as_str(), "request-id" | "x-request-id")
                    && let Ok(value) = std::str::from_utf8(&header.value)
                {
                    ids.requests.insert(value.trim().to_string(), index);
                }
            }
            let reading = hop.read_ref();
            if let Some(Reading::ModelResponse(answer)) =
                reading.response.as_ref().map(|r| &r.reading)
            {
                for call in &answer.message.tool_calls {
                    if let Some(id) = &call.id {
                        ids.tool_calls.entry(id.clone()).or_insert(index);
                    }
                }
                if let (Some(input), Some(output)) =
                    (answer.usage.input_tokens, answer.usage.output_tokens)
                {
                    let seen = tokens.entry((input, output)).or_insert(Some(index));
                    if *seen != Some(index) {
                        *seen = None;
                    }
                }
            }
        }
        ids.unique_tokens = tokens
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .collect();
        ids
    }
}

/// The span a log record was made in (OTLP/JSON `spanId`, hex).
fn span_of(event: &AgentEvent) -> Option<String> {
    let span = event.record.pointer("/log/spanId")?.as_str()?;
    (!span.is_empty() && span.bytes().any(|b| b != b'0')).then(|| span.to_ascii_lowercase())
}

/// A Gemini answer's `responseId` (the first in its stream).
fn response_id(body: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"\"responseId\"";
    let at = body.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let rest = &body[at..];
    let open = rest.iter().position(|&b| b == b'"')?;
    let rest = &rest[open + 1..];
    let close = rest.iter().position(|&b| b == b'"')?;
    let id = std::str::from_utf8(&rest[..close]).ok()?;
    (!id.is_empty() && id.len() <= 200).then(|| id.to_string())
}

/// An API event's (input, output) tokens, as the agents name them.
fn tokens_of(event: &AgentEvent) -> Option<(u64, u64)> {
    let attributes = event.attributes();
    let number = |names: &[&str]| {
        names.iter().find_map(|n| match attributes.get(*n)? {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.parse().ok(),
            _ => None,
        })
    };
    let input = number(&["input_tokens", "input_token_count"])?;
    let output = number(&["output_tokens", "output_token_count"])?;
    (input > 0 || output > 0).then_some((input, output))
}

/// After the hop that asked for a tool call, or a later one that started before the event (a
/// request that starts the moment the tool's result is written carries that result: it comes
/// after the event).
fn after_time(hops: &[RecordedHop], event: &AgentEvent, asked: usize) -> usize {
    let before = hops
        .iter()
        .rposition(|h| h.start.started_unix_ns < event.time_unix_ns);
    before.map_or(asked, |last| last.max(asked))
}

/// The last hop that started at or before `ns`.
fn last_started_before(hops: &[RecordedHop], ns: i64) -> Option<usize> {
    hops.iter().rposition(|h| h.start.started_unix_ns <= ns)
}

#[cfg(test)]
#[path = "agent_join_tests.rs"]
mod tests;
