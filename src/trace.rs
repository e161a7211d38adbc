//! Traces: grouping hops into the trace of one user request, numbering its messages, and
//! explaining each message for a newcomer. Pure functions over recorded hops.

pub mod cache_verdict;
mod call_moment;
pub mod context_shares;
pub mod conversation_pairs;
pub mod correlate;
pub mod cost;
pub mod dates;
mod describe;
mod dialect_words;
pub mod evidence;
pub mod explain;
pub mod explain_context;
mod feed;
pub mod group;
pub mod lanes;
pub mod live_group;
mod model_notes;
pub mod numbering;
pub mod prices;
pub mod prompt_regions;
pub mod readiness;
pub mod request_anatomy;
pub mod request_changes;
pub mod request_views;
mod stopped_reading;
pub mod summary;
mod text_match;
pub mod timing;
pub mod tokens;
pub mod tool_origin;
pub mod transport_moves;

use crate::hop::{HopEnd, HopStart, Role};
use crate::wire::dialect::{self, HopReading, ModelRequest, Reading};
use crate::wire::safe_text::one_line;

pub use describe::{explain_request, explain_request_in, explain_response, explain_response_in};
pub use evidence::{CallKey, TraceInput};
pub use explain::{Case, Explained};
pub use group::{
    Assignment, GroupOptions, Grouper, Grouping, Reason, TraceDraft, TraceKind, group,
};
pub use numbering::{Direction, HopTimes, NumberedMessage, number_messages};
pub use stopped_reading::settle_old_record;
pub use summary::{TraceStatus, TraceSummary, summarize};
pub use tokens::TokenCounts;

/// A hop as the store gives it back: what was known at its start, and its end once it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedHop {
    pub start: HopStart,
    pub end: Option<HopEnd>,
}

impl RecordedHop {
    /// Reads both bodies by the hop's dialect.
    pub fn reading(&self) -> HopReading {
        dialect::read_hop(&self.start, self.end.as_ref())
    }

    /// The grouping view of this hop.
    pub fn trace_input(&self) -> TraceInput {
        TraceInput::from_hop(&self.start, self.end.as_ref())
    }

    pub fn times(&self) -> HopTimes {
        HopTimes::of(&self.start, self.end.as_ref())
    }
}

/// Who sends a message: the caller of the route for a request, its upstream for a response.
pub fn parties(role: Role, direction: Direction) -> (&'static str, &'static str) {
    match direction {
        Direction::Request => (role.caller(), role.as_str()),
        Direction::Response => (role.as_str(), role.caller()),
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
    pub from: &'static str,
    pub to: &'static str,
    pub at_unix_ns: i64,
    /// `POST /api/chat` for a request, the status (`200`, `failed`) for a response.
    pub head: String,
    pub dialect: &'static str,
    pub case: Case,
    pub summary: String,
    pub explanation: String,
    /// On a model's answer: the tokens it reported (None elsewhere, and when it said none).
    pub tokens: Option<TokenCounts>,
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

/// Numbers and explains the messages of one trace's hops (any order; in-flight hops included).
pub fn explain_trace(hops: &[RecordedHop]) -> Vec<ExplainedMessage> {
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let times: Vec<HopTimes> = hops.iter().map(RecordedHop::times).collect();
    let context = explain_context::ExplainContext::of_trace(hops, &readings);
    let mut earlier_model_requests: Vec<&ModelRequest> = Vec::new();
    let mut out = Vec::new();
    let numbered = number_messages(&times);
    let mut hop_numbers = vec![0; hops.len()];
    for message in numbered
        .iter()
        .filter(|m| m.direction == Direction::Request)
    {
        hop_numbers[message.hop_index] = message.number;
    }
    for message in numbered {
        let index = message.hop_index;
        let (hop, reading) = (&hops[index], &readings[index]);
        let explained = match message.direction {
            Direction::Request => {
                let request = match &reading.request.reading {
                    Reading::ModelRequest(request) => Some(request),
                    _ => None,
                };
                let previous =
                    request.and_then(|r| request_anatomy::previous_of(r, &earlier_model_requests));
                let explained = explain_request_in(hop, reading, previous, &context);
                // A side request (routing, a title) is not what the next turn adds to.
                earlier_model_requests.extend(request.filter(|r| !r.is_side_request()));
                explained
            }
            Direction::Response => {
                let mut explained = explain_response_in(hop, reading, &context);
                if let Some((_, more)) = numbering::streamed_on(&times, index) {
                    let more = explain::human_duration(more);
                    explained.note(Case::NoteStreamedOn, &[("more", more)]);
                }
                explained
            }
        };
        let (from, to) = parties(hop.start.role, message.direction);
        let head = match message.direction {
            Direction::Request => format!("{} {}", hop.start.method, hop.start.path),
            Direction::Response => response_head(hop),
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
            summary: one_line(&explained.summary).into_owned(),
            explanation: one_line(&explained.explanation).into_owned(),
            tokens: match message.direction {
                Direction::Request => None,
                Direction::Response => reply_tokens(reading),
            },
            cost: match message.direction {
                Direction::Request => None,
                Direction::Response => cost::hop_cost(reading),
            },
        });
    }
    out
}
