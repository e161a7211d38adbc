//! What the grouper remembers about one trace, and when that trace counts as open.

use super::TraceDraft;
use crate::trace::evidence::CallKey;
use crate::trace::text_match::MatchText;

#[derive(Debug)]
pub(super) struct TraceState {
    pub(super) draft: TraceDraft,
    /// (start, end) of the hops of this trace.
    pub(super) spans: Vec<(i64, Option<i64>)>,
    pub(super) agent_spans: Vec<(i64, Option<i64>)>,
    /// Texts that identify the user request: the title and the user texts of joined requests.
    pub(super) texts: Vec<MatchText>,
    pub(super) asked: Vec<(CallKey, bool)>,
    pub(super) results: Vec<String>,
    pub(super) peers: Vec<String>,
    pub(super) model_requests: usize,
    pub(super) children: usize,
}

/// How long a hop with no end counts as in flight. Past it the hop is taken as dead (a proxy
/// killed mid-hop never ends its row) so it cannot hold its trace open for ever; live hops that
/// long are rare (a model load or a long stream), and the proxy's own upstream timeout is 10 min.
const NEVER_ENDED_OPEN_NS: i64 = 15 * 60 * 1_000_000_000;

impl TraceState {
    fn in_flight_at(spans: &[(i64, Option<i64>)], t: i64) -> bool {
        spans.iter().any(|(start, end)| {
            *start <= t && end.map_or(t - *start <= NEVER_ENDED_OPEN_NS, |end| end >= t)
        })
    }

    /// 0 while a hop is in flight at `t`, else the time since the last hop ended.
    pub(super) fn distance(&self, t: i64) -> i64 {
        if Self::in_flight_at(&self.spans, t) {
            return 0;
        }
        let last = self
            .spans
            .iter()
            .map(|(start, end)| end.unwrap_or_else(|| start.saturating_add(NEVER_ENDED_OPEN_NS)))
            .filter(|at| *at <= t)
            .max()
            .unwrap_or(self.draft.started_ns);
        (t - last).max(0)
    }

    /// A trace with an agent hop is open while that hop is; others within the window.
    pub(super) fn is_open(&self, t: i64, window: i64) -> bool {
        if self.agent_spans.is_empty() {
            self.distance(t) <= window
        } else {
            Self::in_flight_at(&self.agent_spans, t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_that_never_ended_stops_holding_its_trace_open() {
        let spans = [(0, None)];
        assert!(
            TraceState::in_flight_at(&spans, 60_000_000_000),
            "a minute in: still in flight"
        );
        assert!(
            !TraceState::in_flight_at(&spans, NEVER_ENDED_OPEN_NS + 1),
            "dead after the limit"
        );
        assert!(TraceState::in_flight_at(&[(0, Some(10))], 5));
        assert!(!TraceState::in_flight_at(&[(0, Some(10))], 11));
    }
}
