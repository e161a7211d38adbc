//! Numbering a trace's messages 1..M in the order they happened (a request → or a response ←).
//!
//! A request (→) happens when it starts; a response (←) when it ends, except that a streamed model
//! answer carrying a tool call, still streaming when the host started the next hop (it ran the
//! tool), happens when that call was complete in the stream, so the `tools/call` it asks for
//! follows it (`read::call_moment`). A hop is named by the number of its request. The buy-milk
//! trace is ten messages, the user's reply last.

use tracer_wire::hop::{HopEnd, HopStart, HopState};

/// Which arrow of a hop a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The request: caller → upstream.
    Request,
    /// The response: upstream → caller.
    Response,
}

impl Direction {
    pub fn arrow(self) -> &'static str {
        match self {
            Direction::Request => "→",
            Direction::Response => "←",
        }
    }
}

/// When a hop's two messages happened; `response_ns` is None while it is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HopTimes {
    pub request_ns: i64,
    pub response_ns: Option<i64>,
    /// When a streamed answer's first tool call was complete, if before `response_ns`: the
    /// answer is numbered then, and went on streaming until `response_ns`.
    pub told_ns: Option<i64>,
}

impl HopTimes {
    /// The times of a recorded hop: its response counts from when it ended (else its head, else
    /// when the request ended); a hop still in flight has no response message yet.
    pub(crate) fn of(start: &HopStart, end: Option<&HopEnd>) -> Self {
        let response_ns = end.and_then(|e| match e.state {
            Some(HopState::InFlight) => None,
            _ => Some(
                e.response_ended_unix_ns
                    .or(e.response_head_unix_ns)
                    .or(e.request_ended_unix_ns)
                    .unwrap_or(start.started_unix_ns),
            ),
        });
        let told_ns = end
            .and_then(|e| super::call_moment::tool_call_complete_ns(start, e))
            .filter(|told| response_ns.is_some_and(|end| *told < end))
            .map(|told| told.max(start.started_unix_ns));
        Self {
            request_ns: start.started_unix_ns,
            response_ns,
            told_ns,
        }
    }
}

/// When hop `index`'s answer went on streaming after its tool call was complete while another
/// hop of the trace started (the host ran the tool): that moment, and how long it streamed on.
/// Only then is the answer told before its end; without an overlap nothing moves.
pub(crate) fn streamed_on(hops: &[HopTimes], index: usize) -> Option<(i64, i64)> {
    let hop = hops.get(index)?;
    let (told, end) = (hop.told_ns?, hop.response_ns?);
    let overlapped = hops
        .iter()
        .enumerate()
        .any(|(other, t)| other != index && t.request_ns >= told && t.request_ns < end);
    overlapped.then_some((told, end - told))
}

/// One numbered message: its number, which hop (index into the input) and which arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NumberedMessage {
    pub number: usize,
    pub hop_index: usize,
    pub direction: Direction,
    pub at_ns: i64,
}

/// Numbers the messages of one trace's hops, 1..M, in the order they happened.
///
/// At equal times a response comes before another hop's request (it caused it), except that a
/// hop's own request always comes before its response.
pub(crate) fn number_messages(hops: &[HopTimes]) -> Vec<NumberedMessage> {
    let mut events: Vec<(i64, u8, usize, Direction)> = Vec::with_capacity(hops.len() * 2);
    for (index, hop) in hops.iter().enumerate() {
        events.push((hop.request_ns, 1, index, Direction::Request));
        let told = streamed_on(hops, index).map(|(told, _)| told);
        if let Some(at) = told.or(hop.response_ns) {
            let at = at.max(hop.request_ns);
            let rank = if at == hop.request_ns { 2 } else { 0 };
            events.push((at, rank, index, Direction::Response));
        }
    }
    events.sort_by_key(|(at, rank, index, _)| (*at, *rank, *index));
    events
        .into_iter()
        .enumerate()
        .map(
            |(position, (at_ns, _, hop_index, direction))| NumberedMessage {
                number: position + 1,
                hop_index,
                direction,
                at_ns,
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(request_ns: i64, response_ns: Option<i64>) -> HopTimes {
        HopTimes {
            request_ns,
            response_ns,
            told_ns: None,
        }
    }

    #[test]
    fn an_answer_is_told_when_its_tool_call_was_complete() {
        // The model streams 10..100, its call complete at 40; the host runs the tool at 45..50.
        let answer = HopTimes {
            told_ns: Some(40),
            ..times(10, Some(100))
        };
        let hops = [answer, times(45, Some(50))];
        let order: Vec<(usize, Direction, i64)> = number_messages(&hops)
            .iter()
            .map(|m| (m.hop_index, m.direction, m.at_ns))
            .collect();
        use Direction::{Request as Rq, Response as Rs};
        assert_eq!(order, [(0, Rq, 10), (0, Rs, 40), (1, Rq, 45), (1, Rs, 50)]);
    }

    #[test]
    fn nested_hops_number_like_the_article() {
        // you → agent (0..100) around tools/list (10..20) and a model call (30..60).
        let hops = [
            times(0, Some(100)),
            times(10, Some(20)),
            times(30, Some(60)),
        ];
        let order: Vec<(usize, Direction)> = number_messages(&hops)
            .iter()
            .map(|m| (m.hop_index, m.direction))
            .collect();
        use Direction::{Request as Rq, Response as Rs};
        assert_eq!(
            order,
            [(0, Rq), (1, Rq), (1, Rs), (2, Rq), (2, Rs), (0, Rs)]
        );
    }

    #[test]
    fn ties_put_causes_first_and_in_flight_hops_have_one_message() {
        let hops = [times(5, Some(10)), times(10, Some(10)), times(12, None)];
        let numbered = number_messages(&hops);
        let order: Vec<(usize, Direction)> = numbered
            .iter()
            .map(|m| (m.hop_index, m.direction))
            .collect();
        use Direction::{Request as Rq, Response as Rs};
        assert_eq!(order, [(0, Rq), (0, Rs), (1, Rq), (1, Rs), (2, Rq)]);
        assert_eq!(numbered.last().map(|m| m.number), Some(5));
    }
}
