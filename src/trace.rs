//! Traces: grouping hops into the trace of one user request, numbering its messages, and
//! explaining each message for a newcomer. Pure functions over recorded hops.

pub mod agent_endpoints;
pub mod cache_verdict;
mod call_moment;
pub mod callers;
pub mod changes_by_call;
pub mod context_shares;
pub mod conversation_pairs;
pub mod correlate;
pub mod cost;
pub mod dates;
mod describe;
mod describe_hosts;
mod describe_mcp;
mod describe_mcp_answer;
mod describe_mcp_content;
mod describe_mcp_hop;
mod describe_mcp_words;
mod describe_plain;
mod describe_streams;
mod dialect_words;
pub mod evidence;
pub mod explain;
pub mod explain_context;
mod failed_hop;
mod feed;
pub mod group;
pub mod host_patterns;
pub mod host_tools;
pub mod kept_readings;
pub mod lanes;
pub mod live_group;
pub mod mcp_messages;
mod mcp_withdrawn;
pub mod message_notes;
mod model_notes;
pub mod numbering;
mod openapi_calls;
pub mod prices;
pub mod prompt_regions;
pub mod read_once;
pub mod readiness;
pub mod readings_as_recorded;
pub mod request_anatomy;
pub mod request_changes;
pub mod request_parts;
pub mod request_views;
pub mod search;
pub mod search_text;
pub mod side_calls;
mod stopped_reading;
pub mod subagents;
pub mod summary;
mod text_match;
pub mod timing;
pub mod tokens;
mod tool_call_links;
pub mod tool_context;
pub mod tool_links;
pub mod tool_origin;
pub mod transport_moves;
pub mod ws_lines;
pub mod ws_turns;
mod ws_words;

use crate::hop::{HopEnd, HopStart};
use crate::wire::dialect::{self, HopReading, Reading};
use crate::wire::safe_text::one_line;

pub use describe::{explain_request, explain_request_in, explain_response, explain_response_in};
pub use evidence::{CallKey, TraceInput};
pub use explain::{Case, Explained};
pub use group::{
    Assignment, GroupOptions, Grouper, Grouping, Reason, TraceDraft, TraceKind, group,
};
pub use numbering::{Direction, HopTimes, NumberedMessage, number_messages};
pub use side_calls::SideCall;
pub use stopped_reading::settle_old_record;
pub use summary::{TraceStatus, TraceSummary, summarize, trace_name};
pub use tokens::TokenCounts;

/// A hop as the store gives it back: what was known at its start, and its end once it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedHop {
    pub start: HopStart,
    pub end: Option<HopEnd>,
    /// Its reading and request parts once made (`read_once`): a cache, not part of the record.
    pub read: read_once::ReadOnce,
}

/// Reads both bodies of a hop by its dialect (not kept: see [`RecordedHop::reading`]).
fn reading_of(hop: &RecordedHop) -> HopReading {
    dialect::read_hop(&hop.start, hop.end.as_ref())
}

impl RecordedHop {
    /// A hop of these records, not read yet.
    pub fn new(start: HopStart, end: Option<HopEnd>) -> Self {
        Self {
            start,
            end,
            read: read_once::ReadOnce::default(),
        }
    }

    /// Both bodies read by the hop's dialect: read the first time, then kept with the hop.
    pub fn reading(&self) -> HopReading {
        self.read_ref().clone()
    }

    /// The hop's reading, as kept (see [`RecordedHop::reading`]).
    pub fn read_ref(&self) -> &HopReading {
        self.read.reading(|| reading_of(self))
    }

    /// What its request body is made of, when it is a model request read as JSON: measured the
    /// first time, then kept.
    pub fn request_parts(&self) -> Option<std::sync::Arc<request_parts::RequestParts>> {
        if !matches!(self.read_ref().request.reading, Reading::ModelRequest(_)) {
            return None;
        }
        self.read.parts(|| request_parts::RequestParts::of(self))
    }

    /// The grouping view of this hop.
    pub fn trace_input(&self) -> TraceInput {
        let own = TraceInput::from_hop(&self.start, self.end.as_ref());
        match self.end.as_ref().and_then(|e| e.websocket.as_ref()) {
            Some(_) => ws_turns::merged_input(self, own),
            None => own,
        }
    }

    pub fn times(&self) -> HopTimes {
        HopTimes::of(&self.start, self.end.as_ref())
    }
}

/// One numbered, explained message of a trace: everything `tracer show` prints for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExplainedMessage {
    pub number: usize,
    /// The number of this hop's request: a hop is named by it.
    pub hop_number: usize,
    pub hop_id: String,
    /// The index of the hop in the slice given to `explain_trace`.
    pub hop_index: usize,
    pub direction: Direction,
    /// The lanes it goes between, named by route (`you`, a host's route, `agent` when tracer
    /// does not stand in front of the caller).
    pub from: String,
    pub to: String,
    pub at_unix_ns: i64,
    /// `POST /api/chat` for a request, the status (`200`, `failed`) for a response.
    pub head: String,
    pub dialect: &'static str,
    pub case: Case,
    pub summary: String,
    pub explanation: String,
    /// On a model's answer: the tokens it reported (None elsewhere, and when it said none).
    pub tokens: Option<TokenCounts>,
    /// The side call this hop is (a title, routing, telemetry…), outside the conversation.
    pub side_call: Option<SideCall>,
    /// The messages this one is linked to by a tool call: on a model's answer, the `tools/call`
    /// requests that ran what it asked for; on a `tools/call` request, the answer that asked.
    pub links: Vec<usize>,
    /// Which JSON-RPC message of the hop's SSE answer this is (a server's request, a
    /// notification); None for the hop's own request and its one answer.
    pub part: Option<usize>,
    /// On a model's answer: what the call cost at list prices, or why that is unknown.
    pub cost: Option<cost::HopCost>,
}

impl ExplainedMessage {
    /// The one-line form: `4 agent → model  POST /api/chat  qwen2.5:7b, 2 messages, 5 tools`.
    pub fn line(&self) -> String {
        format!(
            "{} {} → {}  {}  {}",
            self.number, self.from, self.to, self.head, self.summary
        )
    }
}

fn response_head(hop: &RecordedHop) -> String {
    match hop.end.as_ref() {
        Some(end) => match (end.status, end.state) {
            (Some(status), _) => status.to_string(),
            (None, Some(state)) => state.as_str().to_string(),
            (None, None) => "…".to_string(),
        },
        None => "…".to_string(),
    }
}

/// The tokens a model's answer reported, if it reported any.
pub fn reply_tokens(reading: &HopReading) -> Option<TokenCounts> {
    match reading.response.as_ref().map(|r| &r.reading) {
        Some(Reading::ModelResponse(reply)) if !reply.usage.is_empty() => {
            Some(TokenCounts::of(&reply.usage))
        }
        _ => None,
    }
}

/// A trace's hops read, and its messages numbered: the first half of `explain_trace`.
fn read_and_number(
    hops: &[RecordedHop],
) -> (
    Vec<HopReading>,
    openapi_calls::OpenApiTrace,
    Vec<HopTimes>,
    Vec<mcp_messages::Slot>,
) {
    let mut readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let openapi = openapi_calls::OpenApiTrace::of(hops, &mut readings);
    let times: Vec<HopTimes> = hops.iter().map(RecordedHop::times).collect();
    let numbered = number_messages(&times);
    // MCP: every message of an SSE stream is a message; answers nobody sent are not.
    let slots = mcp_messages::slots(hops, &readings, &numbered);
    (readings, openapi, times, slots)
}

/// The numbers `explain_trace` gives the messages of one trace's hops, without explaining
/// them: (number, hop index, direction, SSE part).
pub fn number_trace(hops: &[RecordedHop]) -> Vec<(usize, usize, Direction, Option<usize>)> {
    let (_, _, _, slots) = read_and_number(hops);
    slots
        .into_iter()
        .map(|slot| {
            let m = slot.message;
            (m.number, m.hop_index, m.direction, slot.part)
        })
        .collect()
}

/// Numbers and explains the messages of one trace's hops (any order; in-flight hops included).
pub fn explain_trace(hops: &[RecordedHop]) -> Vec<ExplainedMessage> {
    let (readings, openapi, times, slots) = read_and_number(hops);
    let parties = callers::parties_of(hops, &readings);
    let context = explain_context::ExplainContext::of_trace(hops, &readings);
    let mut out = Vec::new();
    let mut hop_numbers = vec![0; hops.len()];
    let mut answer_numbers = vec![0; hops.len()];
    for slot in slots.iter().filter(|s| s.part.is_none()) {
        match slot.message.direction {
            Direction::Request => hop_numbers[slot.message.hop_index] = slot.message.number,
            Direction::Response => answer_numbers[slot.message.hop_index] = slot.message.number,
        }
    }
    let links = tool_call_links::TraceLinks::of(hops, &readings);
    let numbers = tool_call_links::Numbers {
        requests: &hop_numbers,
        answers: &answer_numbers,
    };
    let mut mcp_trace = mcp_messages::McpTrace::of(hops, &readings, &hop_numbers);
    let threads = subagents::threads_of(hops, &readings);
    for slot in slots {
        let message = slot.message;
        let index = message.hop_index;
        let (hop, reading) = (&hops[index], &readings[index]);
        // A subagent's requests are a conversation of their own, not a side call.
        let side_call = context
            .conversations
            .side_call(index)
            .filter(|_| threads[index].is_none());
        let mcp = mcp_trace.explain(hop, reading, &slot, &context);
        let sent_by_server = mcp
            .as_ref()
            .map(|(_, side)| *side == describe_mcp::Side::Server);
        let rest = openapi.explain(hop, reading, index, message.direction, &answer_numbers);
        let explained = match (mcp, rest, message.direction) {
            (Some((explained, _)), _, _) => explained,
            (None, Some(rest), _) => rest,
            (None, None, Direction::Request) => {
                // Only an earlier request of the same conversation is what this one adds to.
                let previous = context
                    .conversations
                    .previous(index)
                    .and_then(|at| match &readings[at].request.reading {
                        Reading::ModelRequest(request) => Some(request),
                        _ => None,
                    });
                explain_request_in(hop, reading, previous, &context)
            }
            (None, None, Direction::Response) => {
                let mut explained = explain_response_in(hop, reading, &context);
                if let Some((_, more)) = numbering::streamed_on(&times, index) {
                    let more = explain::human_duration(more);
                    explained.note(Case::NoteStreamedOn, &[("more", more)]);
                }
                explained
            }
        };
        let callers::Parties { caller, upstream } = parties[index].clone();
        let (from, to) = match (sent_by_server, message.direction) {
            (Some(true), _) | (None, Direction::Response) => (upstream, caller),
            (Some(false), _) | (None, Direction::Request) => (caller, upstream),
        };
        let head = match (message.direction, slot.part) {
            (Direction::Request, _) => format!("{} {}", hop.start.method, hop.start.path),
            (Direction::Response, Some(_)) => "SSE event".to_string(),
            (Direction::Response, None) => response_head(hop),
        };
        let mut summary = explained.summary;
        if let Some(side) = side_call {
            summary = format!("side call ({}): {summary}", side.as_str());
        }
        let summary_marked =
            subagents::marked(summary, &threads, index, message.direction, &answer_numbers);
        let mut summary = summary_marked;
        let linked = if slot.part.is_none() {
            if let Some(words) = links.words(index, message.direction, &numbers) {
                summary.push_str(&words);
            }
            links.numbers(index, message.direction, &numbers)
        } else {
            Vec::new()
        };
        out.push(ExplainedMessage {
            number: message.number,
            hop_number: hop_numbers[index],
            hop_id: hop.start.id.clone(),
            hop_index: index,
            direction: message.direction,
            from,
            to,
            at_unix_ns: message.at_ns,
            // Words for a person, made of recorded text: no control or bidi character as it is.
            head: one_line(&head).into_owned(),
            dialect: reading.dialect.as_str(),
            case: explained.case,
            summary: one_line(&summary).into_owned(),
            explanation: one_line(&explained.explanation).into_owned(),
            tokens: match message.direction {
                Direction::Request => None,
                Direction::Response => reply_tokens(reading),
            },
            side_call,
            links: linked,
            part: slot.part,
            cost: match message.direction {
                Direction::Request => None,
                Direction::Response => cost::hop_cost(reading),
            },
        });
    }
    openapi.link(&mut out, &hop_numbers, &answer_numbers);
    mcp_withdrawn::name_withdrawn(mcp_trace.withdrawals(), &mut out);
    out
}
