//! Grouping in a running proxy: one grouper kept from pass to pass and fed only the hops that
//! are new or were unfinished, so a pass costs what arrived since the last one, not the window.
//!
//! Hops are fed in start order, each once the evidence its decision reads can be read
//! (`tracer_trace::group::readiness`): until then it waits in a queue, while the hop that owes the
//! evidence is unfinished and has not been overtaken (`GroupOptions::hold_ns` of recorded starts
//! after it, or `idle_hold_ns` of wall time). The record's own clock, not the pass's, bounds the
//! wait, so a pass that runs late or a writer that lags under load never makes a decision without
//! evidence that was already on its way: live grouping decides as a replay of the finished hops
//! (`correlate --rebuild`) does.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use futures_util::TryStreamExt;

use super::feed::{CorrelateReport, Fed, LOOKBACK_NS, SeenHop, feed, session_row, trace_row};
use tracer_store::sessions::{GroupingWrite, TracePlace};
use tracer_store::{HopRow, Result, Store};
use tracer_trace::TraceInput;
use tracer_trace::group::readiness::{self, Evidence};
use tracer_trace::group::{GroupOptions, Grouper};

/// Hops in start order: (request start, seq).
type StartKey = (i64, i64);

/// The live grouper and what it remembers between passes.
#[derive(Debug, Default)]
pub struct LiveGrouping {
    options: GroupOptions,
    /// None until the first pass has replayed the window.
    grouper: Option<Grouper>,
    /// The highest `seq` read so far.
    cursor: i64,
    /// Hops read but not fed yet, in start order.
    queue: BTreeMap<StartKey, SeenHop>,
    /// Hops fed while in flight, by seq: their trace and what was known of them then.
    unfinished: HashMap<i64, Unfinished>,
    /// What unfinished hops still owe later decisions, in start order.
    owing: BTreeMap<StartKey, Evidence>,
    /// Kinds and sessions of traces grouped by another process, looked up once.
    kinds: HashMap<String, TracePlace>,
    /// The latest request start read: the record's clock.
    clock: i64,
}

#[derive(Debug)]
struct Unfinished {
    trace: String,
    input: TraceInput,
}

/// What to do with the first hop of the queue.
enum Verdict {
    Feed,
    /// Its request has not been read for longer than the hold: it waits without holding others.
    Pass,
    Hold,
}

impl LiveGrouping {
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn with_options(options: GroupOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// One pass at the current time: see `pass_at`.
    pub async fn pass(&mut self, store: &Store) -> Result<CorrelateReport> {
        self.pass_at(store, now_ns()).await
    }

    /// One pass, `now_ns` being the time hold limits are measured against: the first replays the
    /// window (what `group_new_hops` runs); each later one reads only hops stored since, and
    /// those waiting or unfinished. Writes what changed. After any failure the next pass starts
    /// again from the database.
    pub async fn pass_at(&mut self, store: &Store, now_ns: i64) -> Result<CorrelateReport> {
        let outcome = self.pass_or_fail(store, now_ns).await;
        if outcome.is_err() {
            *self = Self::with_options(self.options);
        }
        outcome
    }

    async fn pass_or_fail(&mut self, store: &Store, now: i64) -> Result<CorrelateReport> {
        let mut pass = Pass {
            now,
            report: CorrelateReport::default(),
            assignments: Vec::new(),
        };
        let grouper = match self.grouper.take() {
            Some(mut grouper) => {
                self.read_new(store, &mut grouper, &mut pass).await?;
                grouper
            }
            None => self.replay(store, &mut pass).await?,
        };
        let mut grouper = grouper;
        self.release(&mut grouper, &mut pass, None);
        // Once a pass, not once a hop: what overtaken hops still owe is forgotten (`verdict`
        // ignores it already).
        let (options, clock) = (self.options, self.clock);
        self.owing
            .retain(|(started, _), _| !overtaken(options, clock, now, *started));
        pass.report.waiting = self.queue.len();
        let drafts = grouper.take_changed();
        let trace_sessions: Vec<(String, String)> = drafts
            .iter()
            .filter_map(|d| Some((d.id.clone(), d.session_id.clone()?)))
            .collect();
        let traces: Vec<_> = drafts.into_iter().map(trace_row).collect();
        let sessions: Vec<_> = grouper
            .take_changed_sessions()
            .into_iter()
            .map(session_row)
            .collect();
        pass.report.traces = traces.len();
        if !traces.is_empty() || !pass.assignments.is_empty() || !sessions.is_empty() {
            store
                .write_grouping_pass(GroupingWrite {
                    traces: &traces,
                    trace_sessions: &trace_sessions,
                    sessions: &sessions,
                    assignments: &pass.assignments,
                })
                .await?;
        }
        self.grouper = Some(grouper);
        Ok(pass.report)
    }

    /// The first pass: every hop of the window, as `group_new_hops` reads them.
    async fn replay(&mut self, store: &Store, pass: &mut Pass) -> Result<Grouper> {
        let mut grouper = Grouper::new(self.options);
        let since = match store.earliest_unassigned_start().await? {
            Some(start) => Some(start),
            None => store.latest_start().await?,
        };
        let Some(since) = since else {
            return Ok(grouper);
        };
        self.kinds = store.trace_places().await?;
        let lookback = LOOKBACK_NS.max(self.options.window_ns);
        let mut hops = std::pin::pin!(store.hops_for_grouping(since.saturating_sub(lookback)));
        while let Some(stored) = hops.try_next().await? {
            self.take(&mut grouper, SeenHop::from(stored), pass);
        }
        Ok(grouper)
    }

    /// A later pass: hops stored since the last, and those whose request or end was awaited.
    /// They are read a page at a time and taken in start order a chunk at a time.
    async fn read_new(
        &mut self,
        store: &Store,
        grouper: &mut Grouper,
        pass: &mut Pass,
    ) -> Result<()> {
        // Queued hops are read again too: each is fed as it is when it is released.
        let again: Vec<i64> = self
            .queue
            .values()
            .map(|queued| queued.seq)
            .chain(self.unfinished.keys().copied())
            .collect();
        let mut chunk = Chunk::default();
        let mut conn = store.pool().acquire().await?;
        for seqs in again.chunks(PAGE_ROWS) {
            for row in store.hops_with_seqs(&mut conn, seqs).await? {
                chunk.add(store, row).await?;
            }
        }
        // What was stored when the pass began: a pass never chases the rows written during it.
        let upto = store.last_seq(&mut conn).await?;
        let mut after = self.cursor;
        loop {
            let page = store
                .hops_after_seq(&mut conn, after, upto, PAGE_ROWS)
                .await?;
            after = page.last_seq.unwrap_or(after).max(after);
            for row in page.hops {
                chunk.add(store, row).await?;
            }
            if !page.full || chunk.is_full() {
                self.take_chunk(store, grouper, pass, &mut chunk).await?;
            }
            if !page.full {
                return Ok(());
            }
        }
    }

    /// Takes a chunk's hops in start order.
    async fn take_chunk(
        &mut self,
        store: &Store,
        grouper: &mut Grouper,
        pass: &mut Pass,
        chunk: &mut Chunk,
    ) -> Result<()> {
        let mut hops = std::mem::take(&mut chunk.hops);
        chunk.body_bytes = 0;
        hops.sort_by_key(|hop| (hop.input.started_ns, hop.seq));
        for seen in hops {
            // A trace another process made: its kind, read once a pass at most.
            if let Some(trace) = &seen.trace_id
                && !chunk.kinds_read
                && !self.unfinished.contains_key(&seen.seq)
                && !self.kinds.contains_key(trace)
                && !grouper.knows(trace)
            {
                self.kinds = store.trace_places().await?;
                chunk.kinds_read = true;
            }
            self.take(grouper, seen, pass);
        }
        Ok(())
    }

    /// One hop read (in start order): an unfinished one learns what it has now; any other joins
    /// the queue. Then the queue releases what it can up to this hop: everything before it in
    /// start order has been read again by now.
    fn take(&mut self, grouper: &mut Grouper, seen: SeenHop, pass: &mut Pass) {
        let key = (seen.input.started_ns, seen.seq);
        self.cursor = self.cursor.max(seen.seq);
        self.clock = self.clock.max(seen.input.started_ns);
        if let Some(before) = self.unfinished.remove(&seen.seq) {
            grouper.refresh(&before.trace, &before.input, &seen.input);
            self.track(seen.seq, before.trace, seen.input, seen.request_read);
        } else {
            self.queue.insert(key, seen);
        }
        self.release(grouper, pass, Some(key));
    }

    /// Feeds the queue's hops in start order (up to `upto`) while each can be decided.
    fn release(&mut self, grouper: &mut Grouper, pass: &mut Pass, upto: Option<StartKey>) {
        let mut after: Option<StartKey> = None;
        loop {
            let next = match after {
                None => self.queue.iter().next(),
                Some(key) => self
                    .queue
                    .range((Bound::Excluded(key), Bound::Unbounded))
                    .next(),
            };
            let Some((&key, queued)) = next else {
                return;
            };
            if upto.is_some_and(|upto| key > upto) {
                return;
            }
            match self.verdict(key, queued, pass.now) {
                Verdict::Hold => return,
                Verdict::Pass => after = Some(key),
                Verdict::Feed => {
                    after = Some(key);
                    if let Some(seen) = self.queue.remove(&key) {
                        self.feed(grouper, seen, pass);
                    }
                }
            }
        }
    }

    fn verdict(&self, key: StartKey, queued: &SeenHop, now: i64) -> Verdict {
        if queued.trace_id.is_some() {
            return Verdict::Feed;
        }
        let held_too_long = self.overtaken(now, queued.input.started_ns);
        if !queued.request_read {
            return match (held_too_long, queued.is_agent()) {
                // An agent hop opens its trace before its text is known; it learns it later.
                (true, true) => Verdict::Feed,
                (true, false) => Verdict::Pass,
                (false, _) => Verdict::Hold,
            };
        }
        let needs = readiness::needs(&queued.input);
        let owed = self
            .owing
            .range(..key)
            .any(|((started, _), owes)| !self.overtaken(now, *started) && owes.meets(needs));
        if owed { Verdict::Hold } else { Verdict::Feed }
    }

    fn overtaken(&self, now: i64, started: i64) -> bool {
        overtaken(self.options, self.clock, now, started)
    }

    fn feed(&mut self, grouper: &mut Grouper, seen: SeenHop, pass: &mut Pass) {
        let trace = match feed(grouper, &seen, |id| self.kinds.get(id).cloned()) {
            Fed::Placed(trace) => {
                pass.report.kept += 1;
                trace
            }
            Fed::Assigned { hop, trace } => {
                pass.assignments.push((hop, trace.clone()));
                pass.report.assigned += 1;
                trace
            }
        };
        self.track(seen.seq, trace, seen.input, seen.request_read);
    }

    /// Remembers a fed hop that has not ended (to learn its end) and what it still owes.
    fn track(&mut self, seq: i64, trace: String, input: TraceInput, request_read: bool) {
        let key = (input.started_ns, seq);
        let owes = readiness::owes(&input, request_read);
        if owes.is_empty() {
            self.owing.remove(&key);
        } else {
            self.owing.insert(key, owes);
        }
        if input.ended_ns.is_none() || !request_read {
            self.unfinished.insert(seq, Unfinished { trace, input });
        }
    }
}

/// Rows a pass reads per statement: fewer than SQLite's worker queues for a reader (sqlx's row
/// channel holds 50), so the worker never blocks on a reader still parsing the rows before: read
/// as one stream, each row cost two thread wake-ups (docs/performance.md).
const PAGE_ROWS: usize = 48;
/// Hops read before a chunk is taken in start order (within a chunk, as a single statement
/// ordered by start would give them).
const CHUNK_HOPS: usize = 2048;
/// Body bytes read before a chunk is taken, so a chunk of long requests stays small.
const CHUNK_BODY_BYTES: usize = 8 << 20;

/// Hops read and not yet taken, in arrival order.
#[derive(Default)]
struct Chunk {
    hops: Vec<SeenHop>,
    body_bytes: usize,
    /// Trace places were read again during this pass.
    kinds_read: bool,
}

impl Chunk {
    /// Reads one stored row as grouping sees it (its bodies let go of at once).
    async fn add(&mut self, store: &Store, row: HopRow) -> Result<()> {
        if let Some(stored) = store.grouping_hop(row).await? {
            self.body_bytes +=
                stored.end.request_body.bytes.len() + stored.end.response_body.bytes.len();
            self.hops.push(SeenHop::from(stored));
        }
        Ok(())
    }

    fn is_full(&self) -> bool {
        self.hops.len() >= CHUNK_HOPS || self.body_bytes >= CHUNK_BODY_BYTES
    }
}

/// What one pass has done so far.
struct Pass {
    now: i64,
    report: CorrelateReport,
    assignments: Vec<(String, String)>,
}

/// Whether a hop that started at `started` has stopped holding later ones: the record has gone
/// `hold_ns` past it, or `idle_hold_ns` of wall time has.
fn overtaken(options: GroupOptions, clock: i64, now: i64, started: i64) -> bool {
    clock.saturating_sub(started) > options.hold_ns
        || now.saturating_sub(started) > options.idle_hold_ns
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_nanos()).unwrap_or(i64::MAX)
        })
}
