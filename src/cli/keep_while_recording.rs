//! What `tracer proxy` and `tracer run` keep while they record, so the first reader after a
//! long session parses nothing: each large model request's reading as it ends
//! (`tracer_live::readings_as_recorded`), and, once a trace has been quiet for a moment, what
//! `tracer ls` lists of it (`tracer_export::listing`); and the recording they start with it.

use std::time::Duration;

use tracer_export::listing::trace_entry;
use tracer_live::readings_as_recorded::RecordedReadings;
use tracer_record::recording::{Beside, Recording};
use tracer_store::{Store, StoreError};

/// How often new hops are grouped into traces while `tracer proxy` or `tracer run` records.
const GROUPING_PERIOD: Duration = Duration::from_millis(250);

/// The recording `tracer proxy` and `tracer run` start (for `run_id`, when there is one): new
/// hops grouped into traces every [`GROUPING_PERIOD`], and readings and listings kept.
pub fn start_recording(store: &Store, run_id: Option<String>) -> Result<Recording, StoreError> {
    Ok(Recording::start(store.clone(), run_id)?
        .beside(crate::recording_beside::grouping(GROUPING_PERIOD))
        .beside(Beside::until_stopped(keep_until)))
}

/// How long a trace has had no hop in flight and none ended before its listing is kept: an
/// agent's turns come closer together than this, so a long trace is summed up once it waits
/// for its user, not after every hop.
const QUIET: Duration = Duration::from_secs(2);
/// How long the keeper rests when it found nothing to do.
const IDLE: Duration = Duration::from_millis(500);
/// The traces whose listing is kept: what a `tracer ls` shows by default.
const LISTED: i64 = 50;

/// Keeps readings and listings until `stop` resolves; a step in progress is dropped then (what
/// it had not written is made by the next reader). Failures are logged and retried.
async fn keep_until(store: Store, stop: impl std::future::Future<Output = ()>) {
    tokio::pin!(stop);
    let mut readings = RecordedReadings::new();
    loop {
        let work = async {
            match readings.step(&store).await {
                Ok(0) => {}
                Ok(_) => return true,
                Err(error) => tracing::debug!(%error, "keeping the readings of recorded requests"),
            }
            if let Err(error) = keep_quiet_listings(&store).await {
                tracing::debug!(%error, "keeping what tracer ls lists");
            }
            false
        };
        let busy = tokio::select! {
            biased;
            _ = &mut stop => return,
            busy = work => busy,
        };
        if !busy {
            tokio::select! {
                biased;
                _ = &mut stop => return,
                _ = tokio::time::sleep(IDLE) => {}
            }
        }
    }
}

/// Keeps the listing of each of the newest traces that has ended and been quiet for [`QUIET`]
/// and whose kept listing no longer matches it. How many were kept.
async fn keep_quiet_listings(store: &Store) -> anyhow::Result<usize> {
    let now = now_ns();
    let quiet_ns = i64::try_from(QUIET.as_nanos()).unwrap_or(i64::MAX);
    let mut kept = 0;
    for row in store.recent_traces(LISTED).await? {
        let Some(ended) = row.ended_unix_ns else {
            continue;
        };
        if now.saturating_sub(ended) < quiet_ns
            || store.kept_summary(&row.id).await?.summary.is_some()
        {
            continue;
        }
        trace_entry(store, row).await?;
        kept += 1;
    }
    Ok(kept)
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_nanos()).unwrap_or(i64::MAX)
        })
}
