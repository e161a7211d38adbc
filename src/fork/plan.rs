//! A fork's plan, made before anything runs: the recorded exchanges (model and MCP hops in the
//! order they started), which of them come before message N and are answered from the
//! recording, what N is, and the host-run tool calls a replay would make the host run again.

use serde_json::Value;

use super::edits::ForkEdits;
use crate::compare::rerun_agent::{EntryRequest, entry_request};
use crate::replay_server::Recording;
use crate::replay_server::matching::{RequestKey, request_key};
use tracer_live::load::LoadedTrace;
use tracer_trace::Direction;
use tracer_trace::RecordedHop;
use tracer_trace::read::host_tools::host_tool_calls;
use tracer_wire::hop::{Role, Transport};

/// One recorded model or MCP exchange.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub role: Role,
    pub route: String,
    /// The message numbers of its request and its answer.
    pub number: usize,
    pub answer_number: usize,
    /// Where it was sent: the recorded upstream's base URL.
    pub upstream: String,
    pub recording: Recording,
    /// An MCP handshake (`initialize`, a notification, a GET or DELETE): always sent live, so the
    /// session the host holds is one the live server knows.
    pub handshake: bool,
}

/// What message N is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The user's request to the agent (you → agent): edited before it is sent; all else live.
    Entry,
    /// The request of exchange `i`: edited and sent live.
    Request(usize),
    /// The answer of exchange `i`: the recorded answer edited (or the tool's return) is given.
    Answer(usize),
}

/// A host-run tool call a replay makes the host run again.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalCall {
    /// The message asking for it.
    pub message: usize,
    pub name: String,
    pub arguments: Value,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("trace {trace} has messages 1 to {last}; there is no message {at}")]
    NoMessage {
        trace: String,
        at: usize,
        last: usize,
    },
    #[error(
        "message {0} is part of an MCP handshake, which a fork always sends live; fork at a later message"
    )]
    Handshake(usize),
    #[error(
        "message {at} is not an HTTP exchange tracer can answer from (a WebSocket turn or a hop with no answer)"
    )]
    NotHttp { at: usize },
    #[error("--result and --error give what a tools/call returns; message {0} is not one")]
    NotToolCall(usize),
    #[error("message {at}: {why}")]
    Edit { at: usize, why: String },
}

/// Everything a fork needs to know before it starts.
#[derive(Debug, Clone)]
pub struct ForkPlan {
    pub original: String,
    pub at: usize,
    pub target: Target,
    pub exchanges: Vec<Exchange>,
    /// The user's request that opened the trace, when an agent route fronted the host.
    pub entry: Option<EntryRequest>,
    pub edits: ForkEdits,
    /// Message N's body after the edits (request or answer), when it is edited.
    pub edited_body: Option<Vec<u8>>,
    /// The host-run tool calls asked for before N (answered from the recording, so run again).
    pub local_calls: Vec<LocalCall>,
}

impl ForkPlan {
    /// The plan for forking `trace` at message `at` with `edits` (checked against N's body).
    /// `others` are the hops of the same run outside the trace (a host's side calls, its
    /// start-up): answered from the recording too when they come before N.
    pub fn new(
        trace: &LoadedTrace,
        at: usize,
        edits: ForkEdits,
        others: &[RecordedHop],
    ) -> Result<ForkPlan, PlanError> {
        let hops = &trace.hops;
        let messages = tracer_trace::explain_trace(hops);
        let last = messages.iter().map(|m| m.number).max().unwrap_or(0);
        let message = (messages.iter().find(|m| m.number == at)).ok_or(PlanError::NoMessage {
            trace: trace.row.id.clone(),
            at,
            last,
        })?;
        let number_of = |index: usize, direction: Direction| {
            (messages.iter())
                .find(|m| m.hop_index == index && m.direction == direction)
                .map_or(0, |m| m.number)
        };
        // The trace's hops (Some(index)) and the run's others (None), by when they started.
        let mut order: Vec<(Option<usize>, &RecordedHop)> = (hops.iter().enumerate())
            .map(|(i, hop)| (Some(i), hop))
            .chain(others.iter().map(|hop| (None, hop)))
            .collect();
        order.sort_by_key(|(_, hop)| hop.start.started_unix_ns);
        let mut exchanges = Vec::new();
        let mut index_of_hop = vec![None; hops.len()];
        for (in_trace, hop) in order {
            if hop.start.role == Role::Agent {
                continue;
            }
            let number = in_trace.map_or(0, |i| number_of(i, Direction::Request));
            // A WebSocket session and the turns read from it are passed through, never answered.
            let passed_through = tracer_trace::read::ws_turns::is_turn(&hop.start);
            let Some(recording) =
                Recording::of(hop, number).filter(|r| r.status != 101 && !passed_through)
            else {
                continue;
            };
            if let Some(i) = in_trace {
                index_of_hop[i] = Some(exchanges.len());
            }
            exchanges.push(Exchange {
                role: hop.start.role,
                route: hop.start.route.clone(),
                number,
                answer_number: in_trace.map_or(0, |i| number_of(i, Direction::Response)),
                upstream: upstream_base(&hop.start.url, &hop.start.path),
                handshake: is_handshake(hop.start.role, &recording),
                recording,
            });
        }
        let hop = &hops[message.hop_index];
        let target = if hop.start.role == Role::Agent {
            Target::Entry
        } else {
            let index = index_of_hop[message.hop_index].ok_or(PlanError::NotHttp { at })?;
            if exchanges[index].handshake {
                return Err(PlanError::Handshake(at));
            }
            if message.direction == Direction::Response || edits.tool_return.is_some() {
                Target::Answer(index)
            } else {
                Target::Request(index)
            }
        };
        let entry = entry_request(trace).ok();
        let edited_body = edited_body(&target, &exchanges, entry.as_ref(), &edits, at)?;
        let before = |index: usize| match target {
            Target::Entry => false,
            Target::Request(n) | Target::Answer(n) => index < n,
        };
        let mut local_calls: Vec<LocalCall> = host_tool_calls(hops)
            .into_iter()
            .filter(|call| index_of_hop[call.hop_index].is_some_and(before))
            .map(|call| LocalCall {
                message: number_of(call.hop_index, Direction::Response),
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        let n_started = hops[message.hop_index].start.started_unix_ns;
        // A WebSocket session is passed through live (its turns are not answered from the
        // recording): one that opened before N reaches the model again.
        for (i, hop) in hops.iter().enumerate() {
            let upgraded = hop.end.as_ref().and_then(|end| end.status) == Some(101);
            if upgraded && hop.start.started_unix_ns < n_started {
                local_calls.push(LocalCall {
                    message: number_of(i, Direction::Request),
                    name: format!(
                        "a WebSocket session ({} {}): not replayed, its turns reach the model again",
                        hop.start.method, hop.start.path
                    ),
                    arguments: Value::Null,
                });
            }
        }
        // MCP over stdio is not behind the proxy: its calls before N run again, live.
        for (i, hop) in hops.iter().enumerate() {
            if hop.start.transport != Transport::Stdio || hop.start.started_unix_ns >= n_started {
                continue;
            }
            let body = hop
                .end
                .as_ref()
                .map_or(&[][..], |end| &end.request_body.bytes);
            let key = request_key(Role::Mcp, &hop.start.method, &hop.start.path, &[], body);
            if let RequestKey::Mcp {
                method: Some(method),
                tool: Some(tool),
                arguments,
            } = key
                && method == "tools/call"
            {
                local_calls.push(LocalCall {
                    message: number_of(i, Direction::Request),
                    name: format!("{tool} (MCP over stdio: not behind the proxy, so not replayed)"),
                    arguments: arguments.unwrap_or(Value::Null),
                });
            }
        }
        local_calls.sort_by_key(|call| call.message);
        Ok(ForkPlan {
            original: trace.row.id.clone(),
            at,
            target,
            exchanges,
            entry,
            edits,
            edited_body,
            local_calls,
        })
    }

    /// The index of the exchange at N (None when N is the user's request).
    pub fn at_exchange(&self) -> Option<usize> {
        match self.target {
            Target::Entry => None,
            Target::Request(i) | Target::Answer(i) => Some(i),
        }
    }

    /// How many exchanges come before N and are answered from the recording.
    pub fn replayable(&self) -> usize {
        let end = self.at_exchange().unwrap_or(0);
        self.exchanges[..end]
            .iter()
            .filter(|e| !e.handshake)
            .count()
    }
}

fn edited_body(
    target: &Target,
    exchanges: &[Exchange],
    entry: Option<&EntryRequest>,
    edits: &ForkEdits,
    at: usize,
) -> Result<Option<Vec<u8>>, PlanError> {
    let fail = |why: String| PlanError::Edit { at, why };
    if edits.tool_return.is_some() {
        let tool = match target {
            Target::Answer(i) => match &exchanges[*i].recording.key {
                RequestKey::Mcp { method, .. } => method.clone(),
                _ => None,
            },
            _ => None,
        };
        if tool.as_deref() != Some("tools/call") {
            return Err(PlanError::NotToolCall(at));
        }
        if edits.edits_body() {
            return Err(fail(
                "give either --result/--error or a body edit, not both".into(),
            ));
        }
        return Ok(None);
    }
    if !edits.edits_body() {
        return Ok(None);
    }
    let recorded: &[u8] = match target {
        Target::Entry => entry.map(|e| e.body.as_slice()).ok_or_else(|| {
            fail("the user's request was not recorded whole, so it cannot be edited".into())
        })?,
        Target::Request(i) => request_body_of(&exchanges[*i]),
        Target::Answer(i) => {
            let recording = &exchanges[*i].recording;
            let streamed = tracer_wire::hop::header_text(&recording.headers, "content-type")
                .is_some_and(|t| t.contains("event-stream") || t.contains("ndjson"));
            if streamed && !edits.sets.is_empty() {
                return Err(fail(
                    "the recorded answer is a stream; --set edits one JSON answer, so give the whole answer with --body FILE"
                        .into(),
                ));
            }
            &recording.body
        }
    };
    edits
        .body_at(recorded)
        .map(Some)
        .map_err(|e| fail(e.to_string()))
}

/// The recorded request body of an exchange.
pub fn request_body_of(exchange: &Exchange) -> &[u8] {
    &exchange.recording.request
}

/// The base URL a hop was sent to: its URL without the request's path.
fn upstream_base(url: &str, path: &str) -> String {
    if let Some(base) = url.strip_suffix(path)
        && !path.is_empty()
    {
        return base.to_string();
    }
    match url
        .find("://")
        .and_then(|s| url[s + 3..].find('/').map(|p| s + 3 + p))
    {
        Some(end) => url[..end].to_string(),
        None => url.to_string(),
    }
}

fn is_handshake(role: Role, recording: &Recording) -> bool {
    if role != Role::Mcp {
        return false;
    }
    if !recording.method.eq_ignore_ascii_case("POST") {
        return true;
    }
    match &recording.key {
        RequestKey::Mcp { method, .. } => method
            .as_deref()
            .is_none_or(|m| m == "initialize" || m.starts_with("notifications/")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::upstream_base;

    #[test]
    fn the_upstream_base_is_the_url_without_the_path() {
        assert_eq!(
            upstream_base("http://127.0.0.1:9/api/chat", "/api/chat"),
            "http://127.0.0.1:9"
        );
        assert_eq!(
            upstream_base("https://h/v1/messages?beta=true", "/v1/messages?beta=true"),
            "https://h"
        );
        assert_eq!(
            upstream_base("http://h:1/base/mcp", "/mcp"),
            "http://h:1/base"
        );
        assert_eq!(upstream_base("http://h:1/x/y", "/other"), "http://h:1");
    }
}
