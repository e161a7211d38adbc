//! One line about a whole trace, for listings (`tracer ls`): counts, duration, status (its user
//! request's: a failed side call is counted apart), tools used (MCP's and the host's own).

use super::cost::CostSum;
use crate::account::tokens::{TokenCounts, reply_tokens};
use crate::read::RecordedHop;
use crate::read::request_anatomy::{title_line, title_words};
use crate::read::side_calls::Conversations;
use tracer_wire::dialect::{JsonRpcKind, Reading};
use tracer_wire::hop::{HopState, Role};

/// How a trace went, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TraceStatus {
    /// A hop is still waiting for its response.
    InFlight,
    /// A hop got no response (upstream down, client gone).
    Failed,
    /// A hop was answered with an HTTP status of 400 or more.
    HttpError,
    /// An MCP call was answered with a JSON-RPC error.
    ProtocolError,
    /// A tool reported an error to the model (`isError: true`).
    ToolError,
    Ok,
}

impl TraceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceStatus::InFlight => "in flight",
            TraceStatus::Failed => "failed",
            TraceStatus::HttpError => "http error",
            TraceStatus::ProtocolError => "protocol error",
            TraceStatus::ToolError => "tool error",
            TraceStatus::Ok => "ok",
        }
    }
}

/// What `tracer ls` shows about one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSummary {
    /// The user's words, on one line: the agent request's message, else the user's words in the
    /// first model request of the conversation (never a side call's, never the host's context).
    pub title: Option<String>,
    pub hops: usize,
    pub messages: usize,
    pub started_ns: Option<i64>,
    /// Until the last response ended; None while a hop is in flight.
    pub duration_ns: Option<i64>,
    /// How the user's request went: the worst of the trace's own hops, its side calls (the
    /// host's telemetry, account, feature flags, titles) left out.
    pub status: TraceStatus,
    /// Side calls that failed (no response, or an HTTP error): counted apart, never the status.
    pub side_calls_failed: usize,
    /// Tools called (MCP `tools/call`), in order, each once.
    pub tools_used: Vec<String>,
    /// The host's own tools the model called (Claude Code's `Bash`, `Read`), in order, each once.
    pub host_tools_used: Vec<String>,
    /// The tokens its model hops reported, summed.
    pub tokens: TokenCounts,
    /// What its model calls cost at list prices, summed (an unpriced call makes it "at least").
    pub cost: CostSum,
    /// The prompt of the last model call that reported one: the context it carried.
    pub last_prompt: Option<u64>,
}

/// A trace's status in words, with its failed side calls counted apart: `ok`,
/// `ok · 3 side calls failed`, `failed · 1 side call failed`.
pub fn status_words(status: &str, side_calls_failed: usize) -> String {
    match side_calls_failed {
        0 => status.to_string(),
        1 => format!("{status} · 1 side call failed"),
        n => format!("{status} · {n} side calls failed"),
    }
}

/// The tools a trace used, MCP's apart from the host's own, each list joined by `separator`:
/// `append`, `Bash, Read (host)`, `append (mcp) · Bash, Read (host)`; None when it used none.
pub fn tools_words(mcp: &[String], host: &[String], separator: &str) -> Option<String> {
    match (mcp.is_empty(), host.is_empty()) {
        (true, true) => None,
        (false, true) => Some(mcp.join(separator)),
        (true, false) => Some(format!("{} (host)", host.join(separator))),
        (false, false) => Some(format!(
            "{} (mcp) · {} (host)",
            mcp.join(separator),
            host.join(separator)
        )),
    }
}

impl TraceSummary {
    /// `ok`, or `ok · 3 side calls failed` (`status_words`).
    pub fn status_words(&self) -> String {
        status_words(self.status.as_str(), self.side_calls_failed)
    }

    /// The tools it used, MCP's apart from the host's own (`tools_words`).
    pub fn tools_words(&self, separator: &str) -> Option<String> {
        tools_words(&self.tools_used, &self.host_tools_used, separator)
    }
}

/// What every face calls a trace without a title whose kind is `setup`.
pub const SETUP_NAME: &str = "(start-up discovery)";

/// The one name of a trace in listings and headings: its title on one line, else the setup
/// name for a setup trace (`kind` as stored, or None when not known: then told by its hops,
/// none of which asks a model or an agent), else None.
pub fn trace_name(title: Option<&str>, kind: Option<&str>, hops: &[RecordedHop]) -> Option<String> {
    if let Some(title) = title {
        return Some(title_line(title));
    }
    let setup = match kind {
        Some(kind) => kind == "setup",
        None => {
            !hops.is_empty()
                && hops.iter().all(|hop| {
                    hop.trace_input().is_discovery()
                        || crate::read::transport_moves::TransportMove::of(&hop.start).is_some()
                })
        }
    };
    setup.then(|| SETUP_NAME.to_string())
}

/// Summarizes the hops of one trace.
pub fn summarize(hops: &[RecordedHop]) -> TraceSummary {
    let mut status = TraceStatus::Ok;
    let mut side_calls_failed = 0;
    let mut tools_used: Vec<String> = Vec::new();
    let mut agent_title = None;
    let mut model_title = None;
    let mut messages = 0;
    let mut in_flight = false;
    let mut last_end: Option<i64> = None;
    let mut tokens = TokenCounts::default();
    let mut cost = CostSum::default();
    let mut last_prompt = None;
    let readings: Vec<_> = hops.iter().map(RecordedHop::reading).collect();
    let conversations = Conversations::of_trace(hops, &readings);
    // A subagent's requests are a conversation of their own, not side calls.
    let threads = crate::read::subagents::threads_of(hops, &readings);
    let side_call = |index: usize| {
        conversations
            .side_call(index)
            .filter(|_| threads.get(index).is_none_or(Option::is_none))
    };
    let mut order: Vec<usize> = (0..hops.len()).collect();
    order.sort_by_key(|&i| hops[i].start.started_unix_ns);
    let ordered: Vec<&RecordedHop> = order.iter().map(|&i| &hops[i]).collect();
    for (&index, hop) in order.iter().zip(&ordered) {
        let reading = &readings[index];
        if let Some(reported) = reply_tokens(reading) {
            tokens.add(&reported);
            last_prompt = reported.prompt.or(last_prompt);
        }
        if let Some(call) = super::cost::hop_cost(reading) {
            cost.add(&call);
        }
        let times = hop.times();
        messages += 1 + usize::from(times.response_ns.is_some());
        // A host's standing stream stays open while the host runs: the trace is not waiting on
        // it, and its end is not the trace's.
        let standing = crate::read::transport_moves::is_standing_stream(&hop.start);
        match times.response_ns {
            _ if standing => {}
            Some(at) => last_end = Some(last_end.map_or(at, |end| end.max(at))),
            None => in_flight = true,
        }
        let end = hop.end.as_ref();
        let (state, answer) = (end.and_then(|e| e.state), end.and_then(|e| e.status));
        let mut worst = match state {
            // The host stopped listening (it ended its session, or stopped).
            _ if crate::read::transport_moves::host_ended_standing_stream(&hop.start, state) => {
                TraceStatus::Ok
            }
            // A host that ends its session and exits without waiting for the answer.
            _ if crate::read::transport_moves::left_after_ending_session(
                &hop.start, state, answer,
            ) =>
            {
                TraceStatus::Ok
            }
            Some(HopState::Failed | HopState::Aborted) => TraceStatus::Failed,
            _ if end.and_then(|e| e.status).is_some_and(|s| s >= 400) => TraceStatus::HttpError,
            _ => TraceStatus::Ok,
        };
        match &reading.request.reading {
            Reading::AgentRequest(request) if hop.start.role == Role::Agent => {
                agent_title.get_or_insert_with(|| title_line(&request.message));
            }
            Reading::ModelRequest(request)
                if conversations.side_call(index).is_none() && model_title.is_none() =>
            {
                model_title = title_words(request);
            }
            Reading::Mcp(mcp) => {
                if let Some(message) = mcp.request()
                    && message.method.as_deref() == Some("tools/call")
                    && let Some(name) = &message.tool_name
                    && !tools_used.contains(name)
                {
                    tools_used.push(name.clone());
                }
            }
            _ => {}
        }
        // Streamable HTTP's GET declined with 405, a DELETE, a preconnect: ordinary, not failures.
        let ordinary = crate::read::transport_moves::is_ordinary_answer(
            &hop.start,
            end.and_then(|e| e.status),
        );
        // MCP's own: a discovery probe's fallback, a call the host withdrew, -32042.
        let mcp_ordinary = crate::read::mcp_outcome::is_ordinary_outcome(hop, reading);
        if (ordinary && worst == TraceStatus::HttpError) || mcp_ordinary {
            worst = TraceStatus::Ok;
        }
        if let Some(Reading::Mcp(mcp)) = reading.response.as_ref().map(|r| &r.reading)
            && let Some(reply) = mcp.reply()
            && !ordinary
            && !mcp_ordinary
        {
            if reply.kind == JsonRpcKind::Error {
                worst = worst.min(TraceStatus::ProtocolError);
            } else if reply.is_error {
                worst = worst.min(TraceStatus::ToolError);
            }
        }
        // A side call's failure is the host's, beside the user's request: counted apart.
        if side_call(index).is_some() {
            side_calls_failed += usize::from(worst != TraceStatus::Ok);
        } else {
            status = status.min(worst);
        }
    }
    if in_flight {
        status = TraceStatus::InFlight;
    }
    let started_ns = ordered.first().map(|hop| hop.start.started_unix_ns);
    TraceSummary {
        title: agent_title.or(model_title),
        hops: hops.len(),
        messages,
        started_ns,
        duration_ns: match (in_flight, started_ns, last_end) {
            (false, Some(start), Some(end)) => Some(end - start),
            _ => None,
        },
        status,
        side_calls_failed,
        tools_used,
        host_tools_used: crate::read::host_tools::host_tools_used(hops, &readings),
        tokens,
        cost,
        last_prompt,
    }
}
