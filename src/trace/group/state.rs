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

impl TraceState {
    fn in_flight_at(spans: &[(i64, Option<i64>)], t: i64) -> bool {
        spans
            .iter()
            .any(|(start, end)| *start <= t && end.is_none_or(|end| end >= t))
    }

    /// 0 while a hop is in flight at `t`, else the time since the last hop ended.
    pub(super) fn distance(&self, t: i64) -> i64 {
        if Self::in_flight_at(&self.spans, t) {
            return 0;
        }
        let last = self
            .spans
            .iter()
            .map(|(start, end)| end.unwrap_or(*start))
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
