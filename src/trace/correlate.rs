//! The thin driver of grouping over a database: reads the hops, places those already in a trace,
//! assigns the others with `group::Grouper`, and writes traces and assignments back.
//!
//! A hop is decided once the evidence its decision reads can be read (`trace::readiness`): hops
//! whose request body is not stored yet, and hops behind an unfinished one that still owes
//! evidence, are left for a later run (for a bounded time). Only the hops that can matter are
//! read: those from a look-back before the earliest unassigned hop, and those of traces not yet
//! ended. Running it twice changes nothing the second time.

use super::group::{GroupOptions, Grouper, TraceDraft, TraceKind};
use super::{RecordedHop, TraceInput};
use crate::hop::{HopState, Role};
use crate::store::hops::StoredHop;
use crate::store::traces::TraceRow;
use crate::store::{Result, Store};

/// Who the `traces` rows this driver writes are `created_by`.
pub const CREATED_BY: &str = "correlate";

/// How far before the earliest unassigned hop the hops that may hold its trace are read.
pub const LOOKBACK_NS: i64 = 15 * 60 * 1_000_000_000;

impl From<StoredHop> for RecordedHop {
    fn from(stored: StoredHop) -> Self {
        RecordedHop {
            start: stored.start,
            end: Some(stored.end),
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CorrelateReport {
    /// Hops given a trace by this run.
    pub assigned: usize,
    /// Hops that already had one.
    pub kept: usize,
    /// Hops still in flight, left for a later run.
    pub waiting: usize,
    /// Traces written (new or updated).
    pub traces: usize,
}

/// Whether to keep existing assignments or group everything again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupScope {
    /// Assign only the hops without a trace.
    Unassigned,
    /// Forget what this driver assigned before and group every hop again.
    Rebuild,
}

/// Groups new hops every `period` until `stop` resolves, so live views see traces as they
/// happen; a pass is never cut in half. Failures are logged and retried on the next tick.
/// Between passes it rests `PASS_REST` times as long as the last pass took (at most
/// `MAX_REST`), so under sustained load grouping takes a bounded share of the CPU and lags
/// instead of crowding out the traffic it records.
pub async fn group_until(
    store: Store,
    period: std::time::Duration,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    let mut rest = std::time::Duration::ZERO;
    let mut live = super::live_group::LiveGrouping::new();
    loop {
        tokio::select! {
            // A pass that waited on a locked database must not start another after the stop.
            biased;
            _ = &mut stop => return,
            _ = tokio::time::sleep(rest) => {
                let started = std::time::Instant::now();
                if let Err(error) = live.pass(&store).await {
                    tracing::warn!(%error, "grouping hops into traces");
                }
                rest = period.max(started.elapsed() * PASS_REST).min(MAX_REST);
            }
        }
    }
}

/// How many times a live grouping pass's own duration it rests before the next.
const PASS_REST: u32 = 4;
/// The longest rest, so a long pass (a backlog taken at once) is not followed by a long lag.
const MAX_REST: std::time::Duration = std::time::Duration::from_secs(2);

/// The hops of one stored trace, in start order, as the trace code reads them.
pub async fn recorded_hops(store: &Store, trace_id: &str) -> Result<Vec<RecordedHop>> {
    let hops = store.trace_hops(trace_id).await?;
    Ok(hops.into_iter().map(RecordedHop::from).collect())
}

/// A trace by its id or an unambiguous prefix, with its hops.
pub async fn load_trace(store: &Store, id_or_prefix: &str) -> Result<(TraceRow, Vec<RecordedHop>)> {
    let row = store.trace(id_or_prefix).await?;
    let hops = recorded_hops(store, &row.id).await?;
    Ok((row, hops))
}

/// Groups the hops that have no trace yet: the one pass every running part of tracer starts
/// (the proxy's live grouping, `ls`, `show`, `export`, the TUI, `tracer up`). Idempotent, and
/// cheap when there are none.
pub async fn group_new_hops(store: &Store) -> Result<CorrelateReport> {
    correlate(store, GroupOptions::default(), GroupScope::Unassigned).await
}

/// Groups the hops of a store into traces (`tracer correlate`, and `--rebuild`).
pub async fn correlate(
    store: &Store,
    options: GroupOptions,
    scope: GroupScope,
) -> Result<CorrelateReport> {
    if scope == GroupScope::Rebuild {
        store.clear_grouping(CREATED_BY).await?;
    }
    if store.earliest_unassigned_start().await?.is_none() {
        return Ok(CorrelateReport::default());
    }
    // One pass of a fresh live grouper is the replay of the window.
    super::live_group::LiveGrouping::with_options(options)
        .pass(store)
        .await
}

/// A stored hop as grouping keeps it: its ids, whether its request has been read, and its
/// grouping view (no bodies).
#[derive(Debug, Clone)]
pub(crate) struct SeenHop {
    pub(crate) seq: i64,
    pub(crate) trace_id: Option<String>,
    pub(crate) request_read: bool,
    pub(crate) input: TraceInput,
}

impl From<StoredHop> for SeenHop {
    fn from(stored: StoredHop) -> Self {
        SeenHop {
            seq: stored.seq,
            trace_id: stored.trace_id.clone(),
            request_read: stored.state != HopState::InFlight
                || stored.end.request_ended_unix_ns.is_some(),
            input: RecordedHop::from(stored).trace_input(),
        }
    }
}

impl SeenHop {
    /// Whether this hop is an agent hop (which opens its trace before its request is read).
    pub(crate) fn is_agent(&self) -> bool {
        self.input.role == Some(Role::Agent)
    }
}

/// What feeding one hop to a grouper did.
pub(crate) enum Fed {
    /// It had a trace already (grouped earlier, or by another process).
    Placed(String),
    /// Given a trace now.
    Assigned { hop: String, trace: String },
}

/// Feeds one hop (in start order) to `grouper`: placed in the trace it has, or assigned.
/// `kind_of` names the kind of a stored trace.
pub(crate) fn feed(
    grouper: &mut Grouper,
    seen: &SeenHop,
    kind_of: impl Fn(&str) -> Option<String>,
) -> Fed {
    match &seen.trace_id {
        Some(trace_id) => {
            let kind = match kind_of(trace_id).as_deref() {
                Some("setup") => TraceKind::Setup,
                _ => TraceKind::Request,
            };
            grouper.place(&seen.input, trace_id, kind);
            Fed::Placed(trace_id.clone())
        }
        None => {
            let assignment = grouper.assign(&seen.input);
            Fed::Assigned {
                hop: assignment.hop_id,
                trace: assignment.trace_id,
            }
        }
    }
}

/// A trace as the grouper drafted it, as a row to write.
pub(crate) fn trace_row(draft: TraceDraft) -> TraceRow {
    TraceRow {
        id: draft.id,
        title: draft.title,
        kind: draft.kind.as_str().to_string(),
        started_unix_ns: draft.started_ns,
        ended_unix_ns: draft.ended_ns,
        created_by: CREATED_BY.to_string(),
    }
}
