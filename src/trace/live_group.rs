//! Grouping in a running proxy: one grouper kept from pass to pass and fed only the hops that
//! are new or were unfinished, so a pass costs what arrived since the last one, not the window.

use std::collections::{BTreeSet, HashMap};

use futures_util::TryStreamExt;

use super::TraceInput;
use super::correlate::{CorrelateReport, Fed, LOOKBACK_NS, feed, trace_row};
use super::group::{GroupOptions, Grouper};
use crate::store::hops::StoredHop;
use crate::store::{Result, Store};

/// The live grouper and what it remembers between passes.
#[derive(Debug, Default)]
pub struct LiveGrouping {
    options: GroupOptions,
    /// None until the first pass has replayed the window.
    grouper: Option<Grouper>,
    /// The highest `seq` fed so far.
    cursor: i64,
    /// Hops whose request was still arriving: fed once it has.
    waiting: BTreeSet<i64>,
    /// Hops fed while in flight, by seq: their trace and what was known of them then.
    unfinished: HashMap<i64, (String, TraceInput)>,
    /// Kinds of traces grouped by another process, looked up once.
    kinds: HashMap<String, String>,
}

impl LiveGrouping {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_options(options: GroupOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// One pass: the first replays the window (what `group_new_hops` runs); each later one reads
    /// only hops stored since, and those left waiting or unfinished. Writes what changed. After
    /// any failure the next pass starts again from the database.
    pub async fn pass(&mut self, store: &Store) -> Result<CorrelateReport> {
        let outcome = self.pass_or_fail(store).await;
        if outcome.is_err() {
            *self = Self::with_options(self.options);
        }
        outcome
    }

    async fn pass_or_fail(&mut self, store: &Store) -> Result<CorrelateReport> {
        let mut report = CorrelateReport::default();
        let mut assignments = Vec::new();
        let mut grouper = match self.grouper.take() {
            Some(mut grouper) => {
                let again: Vec<i64> = self
                    .waiting
                    .iter()
                    .chain(self.unfinished.keys())
                    .copied()
                    .collect();
                self.feed_new(store, &mut grouper, &again, &mut report, &mut assignments)
                    .await?;
                grouper
            }
            None => self.replay(store, &mut report, &mut assignments).await?,
        };
        let traces: Vec<_> = grouper.take_changed().into_iter().map(trace_row).collect();
        report.traces = traces.len();
        if !traces.is_empty() || !assignments.is_empty() {
            store.write_grouping(&traces, &assignments).await?;
        }
        self.grouper = Some(grouper);
        Ok(report)
    }

    /// The first pass: every hop of the window, as `group_new_hops` reads them.
    async fn replay(
        &mut self,
        store: &Store,
        report: &mut CorrelateReport,
        assignments: &mut Vec<(String, String)>,
    ) -> Result<Grouper> {
        let mut grouper = Grouper::new(self.options);
        let since = match store.earliest_unassigned_start().await? {
            Some(start) => Some(start),
            None => store.latest_start().await?,
        };
        let Some(since) = since else {
            return Ok(grouper);
        };
        self.kinds = store.trace_kinds().await?;
        let lookback = LOOKBACK_NS.max(self.options.window_ns);
        let mut hops = std::pin::pin!(store.hops_for_grouping(since.saturating_sub(lookback)));
        while let Some(stored) = hops.try_next().await? {
            self.feed(&mut grouper, stored, report, assignments);
        }
        Ok(grouper)
    }

    async fn feed_new(
        &mut self,
        store: &Store,
        grouper: &mut Grouper,
        again: &[i64],
        report: &mut CorrelateReport,
        assignments: &mut Vec<(String, String)>,
    ) -> Result<()> {
        let mut hops = std::pin::pin!(store.hops_after_seq(self.cursor, again));
        let mut kinds_read = false;
        while let Some(stored) = hops.try_next().await? {
            if let Some((trace, before)) = self.unfinished.remove(&stored.seq) {
                let seq = stored.seq;
                let after = super::RecordedHop::from(stored).trace_input();
                grouper.refresh(&trace, &before, &after);
                if after.ended_ns.is_none() {
                    self.unfinished.insert(seq, (trace, after));
                }
                continue;
            }
            // A trace another process made: its kind, read once a pass at most.
            if let Some(trace) = &stored.trace_id
                && !kinds_read
                && !self.kinds.contains_key(trace)
                && !grouper.knows(trace)
            {
                self.kinds = store.trace_kinds().await?;
                kinds_read = true;
            }
            self.waiting.remove(&stored.seq);
            self.feed(grouper, stored, report, assignments);
        }
        Ok(())
    }

    fn feed(
        &mut self,
        grouper: &mut Grouper,
        stored: StoredHop,
        report: &mut CorrelateReport,
        assignments: &mut Vec<(String, String)>,
    ) {
        let seq = stored.seq;
        self.cursor = self.cursor.max(seq);
        let (fed, input) = feed(grouper, stored, |id| self.kinds.get(id).cloned());
        let trace = match fed {
            Fed::Waiting => {
                self.waiting.insert(seq);
                report.waiting += 1;
                return;
            }
            Fed::Placed(trace) => {
                report.kept += 1;
                trace
            }
            Fed::Assigned { hop, trace } => {
                assignments.push((hop, trace.clone()));
                report.assigned += 1;
                trace
            }
        };
        if input.ended_ns.is_none() {
            self.unfinished.insert(seq, (trace, input));
        }
    }
}
