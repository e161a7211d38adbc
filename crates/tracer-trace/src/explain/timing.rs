//! A trace's timing waterfall: one bar per hop from its request's start to its response's end,
//! on the trace's time axis, telling model time, tool time and the host's own time apart; the
//! first chunk of a streamed answer; and Ollama's own load / prompt / generation durations where
//! the answer reports them. Shared by the HTML handout and the TUI's timing view.

use crate::{Case, Direction, ExplainedMessage, RecordedHop};
use tracer_wire::dialect::{OllamaTimings, Reading};
use tracer_wire::hop::{HopState, Role};

/// Whose time a bar is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    /// The host's own request (you → agent): its time around the others is the host's.
    Host,
    Model,
    Tool,
    Other,
}

impl BarKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BarKind::Host => "host",
            BarKind::Model => "model",
            BarKind::Tool => "tool",
            BarKind::Other => "other",
        }
    }
}

/// One hop on the time axis; times are nanoseconds after the trace started.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The hop's name: the number of its request message.
    pub hop_number: usize,
    pub hop_index: usize,
    /// `agent → mcp  tools/call append {"content":"buy milk"}`: who called whom, and the request's
    /// summary.
    pub label: String,
    pub kind: BarKind,
    pub start_ns: i64,
    /// None while in flight.
    pub end_ns: Option<i64>,
    /// The first response byte, for streamed answers (more than one chunk).
    pub first_chunk_ns: Option<i64>,
    pub chunks: usize,
    /// No answer, an HTTP error or a protocol error.
    pub failed: bool,
    /// A tool error (`isError`) reported to the model.
    pub tool_error: bool,
    pub ollama: Option<OllamaTimings>,
}

impl Bar {
    pub fn duration_ns(&self) -> Option<i64> {
        self.end_ns.map(|end| end - self.start_ns)
    }
}

/// The whole waterfall and its totals.
#[derive(Debug, Clone, PartialEq)]
pub struct Waterfall {
    pub start_unix_ns: i64,
    /// From the first request to the last response (or the last start while in flight).
    pub span_ns: i64,
    pub bars: Vec<Bar>,
    /// Time covered by model calls (overlaps counted once).
    pub model_ns: i64,
    /// Time covered by tool (MCP) calls.
    pub tool_ns: i64,
    /// The host's own time: its request's time not covered by any model or tool call.
    pub host_ns: i64,
}

/// The waterfall of one trace's hops and their explained messages (`explain_trace(hops)`).
pub fn waterfall(hops: &[RecordedHop], messages: &[ExplainedMessage]) -> Waterfall {
    let start = messages
        .iter()
        .map(|m| m.at_unix_ns)
        .min()
        .or_else(|| hops.iter().map(|h| h.start.started_unix_ns).min())
        .unwrap_or(0);
    let mut bars: Vec<Bar> = messages
        .iter()
        .filter(|m| m.direction == Direction::Request)
        .map(|request| bar(request, messages, &hops[request.hop_index], start))
        .collect();
    bars.sort_by_key(|b| b.hop_number);
    let span_ns = bars
        .iter()
        .map(|b| b.end_ns.unwrap_or(b.start_ns))
        .max()
        .unwrap_or(0);
    let covered = |kinds: &[BarKind]| {
        let intervals: Vec<(i64, i64)> = bars
            .iter()
            .filter(|b| kinds.contains(&b.kind))
            .filter_map(|b| b.end_ns.map(|end| (b.start_ns, end)))
            .collect();
        union_length(intervals)
    };
    let model_ns = covered(&[BarKind::Model]);
    let tool_ns = covered(&[BarKind::Tool]);
    let others = covered(&[BarKind::Model, BarKind::Tool, BarKind::Other]);
    let host_total = bars
        .iter()
        .filter(|b| b.kind == BarKind::Host)
        .filter_map(Bar::duration_ns)
        .max()
        .unwrap_or(span_ns);
    Waterfall {
        start_unix_ns: start,
        span_ns,
        bars,
        model_ns,
        tool_ns,
        host_ns: (host_total - others).max(0),
    }
}

fn bar(
    request: &ExplainedMessage,
    messages: &[ExplainedMessage],
    hop: &RecordedHop,
    start: i64,
) -> Bar {
    let end = hop.end.as_ref();
    let in_flight = end.is_none_or(|e| e.state == Some(HopState::InFlight));
    let response = messages.iter().find(|m| {
        m.hop_index == request.hop_index && m.direction == Direction::Response && m.part.is_none()
    });
    // The hop's own end, not when its answer is told (a tool call's moment, see numbering).
    let end_ns = if in_flight {
        None
    } else {
        response.and(hop.times().response_ns).map(|at| at - start)
    };
    let chunks = end.map_or(0, |e| e.chunks.len());
    let first_chunk_ns = end
        .and_then(|e| e.response_first_byte_unix_ns)
        .filter(|_| chunks > 1)
        .map(|at| at - start);
    let failed = end.is_some_and(|e| {
        matches!(e.state, Some(HopState::Failed | HopState::Aborted))
            || e.status.is_some_and(|s| s >= 400)
    }) || response.is_some_and(|r| r.case == Case::McpProtocolError);
    let ollama = match hop.reading().response.map(|r| r.reading) {
        Some(Reading::ModelResponse(answer)) => answer.timings,
        _ => None,
    };
    let kind = match hop.start.role {
        Role::Agent => BarKind::Host,
        Role::Model => BarKind::Model,
        // The server's own stream is the transport, open while it lasts: not a tool's time.
        Role::Mcp if hop.start.method == "GET" => BarKind::Other,
        Role::Mcp => BarKind::Tool,
        Role::Other => BarKind::Other,
    };
    Bar {
        hop_number: request.hop_number,
        hop_index: request.hop_index,
        label: format!("{} → {}  {}", request.from, request.to, request.summary),
        kind,
        start_ns: request.at_unix_ns - start,
        end_ns,
        first_chunk_ns,
        chunks,
        failed,
        tool_error: response.is_some_and(|r| r.case == Case::McpToolError),
        ollama,
    }
}

/// The length covered by a set of intervals, overlaps counted once.
fn union_length(mut intervals: Vec<(i64, i64)>) -> i64 {
    intervals.sort_unstable();
    let mut total = 0;
    let mut current: Option<(i64, i64)> = None;
    for (from, to) in intervals {
        match current {
            Some((a, b)) if from <= b => current = Some((a, b.max(to))),
            Some((a, b)) => {
                total += b - a;
                current = Some((from, to));
            }
            None => current = Some((from, to)),
        }
    }
    total + current.map_or(0, |(a, b)| b - a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_intervals_count_once() {
        assert_eq!(union_length(vec![(0, 10), (5, 15), (20, 25)]), 20);
        assert_eq!(union_length(vec![]), 0);
        assert_eq!(union_length(vec![(3, 4), (0, 1)]), 2);
    }
}
