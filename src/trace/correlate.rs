//! The thin driver of grouping over a database: reads the hops, places those already in a trace,
//! assigns the others with `group::Grouper`, and writes traces and assignments back.
//!
//! A hop is decided once the evidence its decision reads can be read (`trace::readiness`): hops
//! whose request body is not stored yet, and hops behind an unfinished one that still owes
//! evidence, are left for a later run (for a bounded time). Only the hops that can matter are
//! read: those from a look-back before the earliest unassigned hop, and those of traces not yet
//! ended. Running it twice changes nothing the second time.

use super::RecordedHop;
pub use super::feed::{CREATED_BY, CorrelateReport, LOOKBACK_NS};
use super::group::GroupOptions;
use super::live_group::LiveGrouping;
use crate::store::hops::StoredHop;
use crate::store::traces::TraceRow;
use crate::store::{Result, Store};

impl From<StoredHop> for RecordedHop {
    /// A stored hop as the readers read it (an old record of a client that stopped reading
    /// after the last event reads complete: `settle_old_record`).
    fn from(stored: StoredHop) -> Self {
        let mut end = stored.end;
        super::settle_old_record(&mut end);
        RecordedHop {
            read: Default::default(),
            start: stored.start,
            end: Some(end),
        }
    }
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
/// instead of crowding out the traffic it records. Returns the live grouper, for
/// [`group_last_hops`] once the last hops are written.
pub async fn group_until(
    store: Store,
    period: std::time::Duration,
    stop: impl std::future::Future<Output = ()>,
) -> LiveGrouping {
    tokio::pin!(stop);
    let mut rest = std::time::Duration::ZERO;
    let mut live = LiveGrouping::new();
    loop {
        tokio::select! {
            // A pass that waited on a locked database must not start another after the stop.
            biased;
            _ = &mut stop => return live,
            _ = tokio::time::sleep(rest) => {
                let started = std::time::Instant::now();
                match live.pass(&store).await {
                    Ok(report) => tracing::debug!(
                        ?report,
                        took_ms = started.elapsed().as_millis(),
                        "grouping pass"
                    ),
                    Err(error) => tracing::warn!(%error, "grouping hops into traces"),
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

/// The hops of one stored trace, in start order, as the trace code reads them: each read once
/// as it is loaded, bodies kept (see [`read_trace_hops`]).
pub async fn recorded_hops(store: &Store, trace_id: &str) -> Result<Vec<RecordedHop>> {
    read_trace_hops(store, trace_id, Bodies::Kept).await
}

/// How a trace's hops are loaded for reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bodies {
    /// Every body kept whole, as recorded.
    Kept,
    /// Large model request bodies let go of once read (`read_once`): for the faces that print
    /// what a request is, not its body.
    LetGo,
    /// As `LetGo`, and the request parts of readings taken back are left in the database: for
    /// a listing (`tracer ls`, and the one a running proxy keeps), which reads no context,
    /// cache or changes, so a long trace's per-message measures are never loaded.
    Readings,
}

/// The hops of one stored trace, in start order, each read once as it is loaded (its texts
/// shared with the trace's other hops, `read_once`), so a long trace's re-sent prompts are
/// held once; with [`Bodies::LetGo`], one large request body at a time. A model request read
/// before takes its reading back from the database (`kept_readings`) and, with `LetGo`, its
/// large body is not read at all; those read now are kept for next time.
pub async fn read_trace_hops(
    store: &Store,
    trace_id: &str,
    bodies: Bodies,
) -> Result<Vec<RecordedHop>> {
    let parts = match bodies {
        Bodies::Readings => super::kept_readings::Parts::Left,
        Bodies::Kept | Bodies::LetGo => super::kept_readings::Parts::Taken,
    };
    let mut kept = super::kept_readings::load(store, trace_id, parts).await?;
    let mut to_keep = super::kept_readings::ToKeep::default();
    let mut shared = super::read_once::SharedTexts::default();
    let mut hops = Vec::new();
    let skippable: std::collections::HashSet<String> = match bodies {
        Bodies::LetGo | Bodies::Readings => (kept.iter())
            .filter(|(_, k)| k.body_not_needed())
            .map(|(id, _)| id.clone())
            .collect(),
        Bodies::Kept => Default::default(),
    };
    let agent = crate::hop::Role::Agent.as_str();
    let skip_request = |id: &str, role: &str| role != agent && skippable.contains(id);
    store
        .each_trace_hop_skipping(trace_id, skip_request, |stored| {
            let mut hop = RecordedHop::from(stored);
            if hop.end.as_ref().is_some_and(|e| e.websocket.is_none()) {
                match kept.remove(&hop.start.id) {
                    Some(request) => request.give_to(&hop),
                    None => {
                        super::read_once::read_into(&hop, &mut shared);
                        to_keep.add(&hop);
                    }
                }
                if bodies != Bodies::Kept {
                    super::read_once::let_go_of_request_body(&mut hop);
                }
            }
            hops.push(hop);
        })
        .await?;
    if let Err(error) = to_keep.write(store).await {
        // A database that cannot be written to is still read: the readings are made again.
        tracing::debug!(%error, "keeping the readings of trace {trace_id}");
    }
    let hops = super::ws_turns::with_turns(hops);
    for hop in &hops {
        super::read_once::read_into(hop, &mut shared);
    }
    Ok(hops)
}

/// A trace by its id or an unambiguous prefix, with its hops each read once (see
/// [`read_trace_hops`]).
pub async fn load_read_trace(
    store: &Store,
    id_or_prefix: &str,
    bodies: Bodies,
) -> Result<(TraceRow, Vec<RecordedHop>)> {
    let row = store.trace(id_or_prefix).await?;
    let hops = read_trace_hops(store, &row.id, bodies).await?;
    Ok((row, hops))
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

/// Groups the hops written after recording stopped: one more pass of the live grouper that ran
/// while recording (`group_until`), which reads only what arrived since its last pass, or, when
/// there is none (its task failed), a replay of the window as [`group_new_hops`] runs it. A
/// long session's last hops are grouped without reading its hundreds of bodies again.
pub async fn group_last_hops(store: &Store, live: Option<LiveGrouping>) -> Result<CorrelateReport> {
    match live {
        Some(mut live) => live.pass(store).await,
        None => group_new_hops(store).await,
    }
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
    LiveGrouping::with_options(options).pass(store).await
}
