//! A trace's messages numbered and explained: everything `tracer show` prints for each, its
//! tokens and cost included.

use crate::account::cost::{CostSum, HopCost, hop_cost};
use crate::account::tokens::{TokenCounts, reply_tokens};
use crate::explain::Case;
use crate::explain::describe::{explain_request_in, explain_response_in};
use crate::explain::mcp::messages::{self as mcp_messages, Side};
use crate::explain::mcp::withdrawn;
use crate::read::numbering::{Direction, HopTimes, number_messages};
use crate::read::side_calls::SideCall;
use crate::read::{self, RecordedHop};
use crate::words;
use tracer_wire::dialect::{HopReading, Reading};
use tracer_wire::safe_text::one_line;

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
    pub cost: Option<HopCost>,
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

impl CostSum {
    /// The sum over explained messages' costs (each model answer carries its call's).
    pub fn of_messages(messages: &[ExplainedMessage]) -> CostSum {
        let mut sum = CostSum::default();
        for cost in messages.iter().filter_map(|m| m.cost.as_ref()) {
            sum.add(cost);
        }
        sum
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

/// A trace's hops read, and its messages numbered: the first half of `explain_trace`.
fn read_and_number(
    hops: &[RecordedHop],
) -> (
    Vec<HopReading>,
    read::openapi_calls::OpenApiTrace,
    Vec<HopTimes>,
    Vec<mcp_messages::Slot>,
) {
    let mut readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let openapi = read::openapi_calls::OpenApiTrace::of(hops, &mut readings);
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
    let parties = read::callers::parties_of(hops, &readings);
    let context = read::explain_context::ExplainContext::of_trace(hops, &readings);
    let mut out = Vec::new();
    let mut hop_numbers = vec![0; hops.len()];
    let mut answer_numbers = vec![0; hops.len()];
    for slot in slots.iter().filter(|s| s.part.is_none()) {
        match slot.message.direction {
            Direction::Request => hop_numbers[slot.message.hop_index] = slot.message.number,
            Direction::Response => answer_numbers[slot.message.hop_index] = slot.message.number,
        }
    }
    let links = read::tool_call_links::TraceLinks::of(hops, &readings);
    let numbers = read::tool_call_links::Numbers {
        requests: &hop_numbers,
        answers: &answer_numbers,
    };
    let mut mcp_trace = mcp_messages::McpTrace::of(hops, &readings, &hop_numbers);
    let threads = read::subagents::threads_of(hops, &readings);
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
        let sent_by_server = mcp.as_ref().map(|(_, side)| *side == Side::Server);
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
                if let Some((_, more)) = read::numbering::streamed_on(&times, index) {
                    let more = words::human_duration(more);
                    explained.note(Case::NoteStreamedOn, &[("more", more)]);
                }
                explained
            }
        };
        let read::callers::Parties { caller, upstream } = parties[index].clone();
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
            read::subagents::marked(summary, &threads, index, message.direction, &answer_numbers);
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
                Direction::Response => hop_cost(reading),
            },
        });
    }
    openapi.link(&mut out, &hop_numbers, &answer_numbers);
    withdrawn::name_withdrawn(mcp_trace.withdrawals(), &mut out);
    out
}
