//! What the grouper remembers about one trace, and when that trace counts as open.

use super::TraceDraft;
use crate::group::evidence::CallKey;
use crate::group::text_match::MatchText;

#[derive(Debug)]
pub(super) struct TraceState {
    pub(super) draft: TraceDraft,
    /// (start, end) of the hops of this trace.
    pub(super) spans: Spans,
    pub(super) agent_spans: Spans,
    /// Texts that identify the user request: the title and the user texts of joined requests.
    pub(super) texts: Vec<MatchText>,
    pub(super) asked: Vec<(CallKey, bool)>,
    pub(super) results: Vec<String>,
    pub(super) peers: Vec<String>,
    pub(super) model_requests: usize,
    pub(super) children: usize,
    /// Index of its session in the grouper.
    pub(super) session: usize,
}

/// How long a hop with no end counts as in flight. Past it the hop is taken as dead (a proxy
/// killed mid-hop never ends its row) so it cannot hold its trace open for ever; live hops that
/// long are rare (a model load or a long stream), and the proxy's own upstream timeout is 10 min.
const NEVER_ENDED_OPEN_NS: i64 = 15 * 60 * 1_000_000_000;

/// The (start, end) of a trace's hops, with what the grouper asks of them kept up to date as
/// hops are added, so that asking costs the same for a trace of ten hops and of a million.
#[derive(Debug, Default)]
pub(super) struct Spans {
    all: Vec<(i64, Option<i64>)>,
    latest_start: Option<i64>,
    latest_end: Option<i64>,
    /// Starts of the hops with no end yet.
    unended: Vec<i64>,
}

impl Spans {
    pub(super) fn push(&mut self, start: i64, end: Option<i64>) {
        self.all.push((start, end));
        self.latest_start = self.latest_start.max(Some(start));
        match end {
            Some(end) => self.latest_end = self.latest_end.max(Some(end)),
            None => self.unended.push(start),
        }
    }

    /// A hop that started at `start` with no end has ended at `end`.
    pub(super) fn end(&mut self, start: i64, end: i64) {
        if let Some(at) = self.unended.iter().rposition(|s| *s == start) {
            self.unended.swap_remove(at);
        }
        // The hop is a recent one: look from the back.
        if let Some(span) = self
            .all
            .iter_mut()
            .rev()
            .find(|(s, e)| *s == start && e.is_none())
        {
            span.1 = Some(end);
        }
        self.latest_end = self.latest_end.max(Some(end));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// When the last hop ended, once every hop has.
    pub(super) fn ended(&self) -> Option<i64> {
        if self.unended.is_empty() {
            self.latest_end
        } else {
            None
        }
    }

    /// Asked about a time before some hop started (not how the grouper asks), the answer comes
    /// from every span; else from the running figures.
    fn asked_before_a_start(&self, t: i64) -> bool {
        self.latest_start.is_some_and(|start| start > t)
    }

    fn in_flight_at(&self, t: i64) -> bool {
        if self.asked_before_a_start(t) {
            return in_flight_at(&self.all, t);
        }
        self.latest_end.is_some_and(|end| end >= t)
            || self
                .unended
                .iter()
                .any(|start| t - start <= NEVER_ENDED_OPEN_NS)
    }

    /// When the trace was last active at or before `t`, given that no hop is in flight then.
    fn last_activity(&self, t: i64) -> Option<i64> {
        let never_ended = |start: i64| start.saturating_add(NEVER_ENDED_OPEN_NS);
        if self.asked_before_a_start(t) {
            return self
                .all
                .iter()
                .map(|(start, end)| end.unwrap_or_else(|| never_ended(*start)))
                .filter(|at| *at <= t)
                .max();
        }
        // Nothing in flight at `t`: every end, and every dead hop's cut-off, is before it.
        let unended = self.unended.iter().map(|start| never_ended(*start)).max();
        self.latest_end.max(unended)
    }
}

fn in_flight_at(spans: &[(i64, Option<i64>)], t: i64) -> bool {
    spans.iter().any(|(start, end)| {
        *start <= t && end.map_or(t - *start <= NEVER_ENDED_OPEN_NS, |end| end >= t)
    })
}

impl TraceState {
    /// When the trace ended: its last hop's end once every hop has (a trace of standing streams
    /// alone ended as it began: they hold it open for nothing).
    pub(super) fn ended(&self) -> Option<i64> {
        if self.spans.is_empty() {
            return Some(self.draft.started_ns);
        }
        self.spans.ended()
    }

    /// 0 while a hop is in flight at `t`, else the time since the last hop ended.
    pub(super) fn distance(&self, t: i64) -> i64 {
        if self.spans.in_flight_at(t) {
            return 0;
        }
        let last = self.spans.last_activity(t).unwrap_or(self.draft.started_ns);
        (t - last).max(0)
    }

    /// Whether the trace is a user's request: it has an agent request or a model call (not only
    /// calls a caller made by itself).
    pub(super) fn is_user_request(&self) -> bool {
        !self.agent_spans.is_empty() || self.model_requests > 0
    }

    /// A trace with an agent hop is open while that hop is; others within the window.
    pub(super) fn is_open(&self, t: i64, window: i64) -> bool {
        if self.agent_spans.is_empty() {
            self.distance(t) <= window
        } else {
            self.agent_spans.in_flight_at(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(list: &[(i64, Option<i64>)]) -> Spans {
        let mut spans = Spans::default();
        for (start, end) in list {
            spans.push(*start, *end);
        }
        spans
    }

    #[test]
    fn a_hop_that_never_ended_stops_holding_its_trace_open() {
        let dead = spans(&[(0, None)]);
        assert!(
            dead.in_flight_at(60_000_000_000),
            "a minute in: still in flight"
        );
        assert!(
            !dead.in_flight_at(NEVER_ENDED_OPEN_NS + 1),
            "dead after the limit"
        );
        assert!(spans(&[(0, Some(10))]).in_flight_at(5));
        assert!(!spans(&[(0, Some(10))]).in_flight_at(11));
    }

    #[test]
    fn the_running_figures_answer_as_every_span_would() {
        let list = [
            (0, Some(40)),
            (5, None),
            (10, Some(12)),
            (30, Some(35)),
            (50, None),
            (60, Some(2_000_000_000_000)),
        ];
        let mut running = Spans::default();
        for (i, (start, end)) in list.iter().enumerate() {
            running.push(*start, *end);
            let seen = &list[..=i];
            // The grouper asks at or after the latest start; also ask before it (the slow path).
            for t in [
                0,
                4,
                11,
                36,
                45,
                55,
                60,
                61,
                NEVER_ENDED_OPEN_NS + 6,
                i64::MAX / 4,
            ] {
                assert_eq!(
                    running.in_flight_at(t),
                    in_flight_at(seen, t),
                    "t={t} after {i}"
                );
                let expected = seen
                    .iter()
                    .map(|(s, e)| e.unwrap_or_else(|| s.saturating_add(NEVER_ENDED_OPEN_NS)))
                    .filter(|at| *at <= t)
                    .max();
                if !in_flight_at(seen, t) {
                    assert_eq!(running.last_activity(t), expected, "t={t} after {i}");
                }
            }
        }
        assert_eq!(running.ended(), None);
        assert_eq!(spans(&[(0, Some(4)), (1, Some(9))]).ended(), Some(9));
    }
}
