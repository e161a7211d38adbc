//! The thin driver of grouping over a database: reads the hops, places those already in a trace,
//! assigns the others with `tracer_trace::Grouper`, and writes traces and assignments back.
//!
//! A hop is decided once the evidence its decision reads can be read
//! (`tracer_trace::group::readiness`): hops whose request body is not stored yet, and hops behind
//! an unfinished one that still owes evidence, are left for a later run (for a bounded time). Only
//! the hops that can matter are read: those from a look-back before the earliest unassigned hop,
//! and those of traces not yet ended. Running it twice changes nothing the second time.

pub use super::feed::{CREATED_BY, CorrelateReport, LOOKBACK_NS};
use super::live_group::LiveGrouping;
use tracer_store::{Result, Store};
use tracer_trace::group::GroupOptions;

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
/// instead of crowding out the traffic it records; a rest ends early once no new hop has been
/// stored for [`QUIET_LOOK`] (the load has stopped: its backlog is grouped at once). Returns the
/// live grouper, for [`group_last_hops`] once the last hops are written.
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
            () = rest_until_due_or_quiet(&store, QUIET_LOOK.min(period), rest) => {
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
const MAX_REST: std::time::Duration = std::time::Duration::from_secs(1);
/// How often a rest looks whether hops are still being stored: a load that stops is grouped
/// within about this much more than its backlog takes (a false "quiet" under a thin load only
/// starts a pass early).
const QUIET_LOOK: std::time::Duration = std::time::Duration::from_millis(100);

/// Rests `rest`, or less: a rest longer than `look` looks every `look` at the newest stored
/// hop and ends when it has not changed since the last look.
async fn rest_until_due_or_quiet(
    store: &Store,
    look: std::time::Duration,
    rest: std::time::Duration,
) {
    let due = tokio::time::Instant::now() + rest;
    let mut last = if rest > look {
        newest_seq(store).await
    } else {
        None
    };
    loop {
        let now = tokio::time::Instant::now();
        if now >= due {
            return;
        }
        tokio::time::sleep_until(due.min(now + look)).await;
        if rest <= look {
            continue;
        }
        let newest = newest_seq(store).await;
        if newest.is_some() && last == newest {
            return;
        }
        last = newest;
    }
}

/// The newest stored hop's `seq`, when it can be read.
async fn newest_seq(store: &Store) -> Option<i64> {
    let mut conn = store.pool().acquire().await.ok()?;
    store.last_seq(&mut conn).await.ok()
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

#[cfg(test)]
#[path = "correlate_tests.rs"]
mod tests;
