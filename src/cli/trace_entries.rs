//! What `tracer ls` lists per trace: its kept summary, or one computed from its hops and kept.

use tracer_export::hop_log::{SessionEntry, TraceEntry};
use tracer_live::load::{Bodies, read_trace_hops};
use tracer_store::Store;
use tracer_store::traces::TraceRow;
use tracer_trace::account::summary::TraceStatus;
use tracer_trace::summarize;

/// One trace as listed: its kept summary while the trace is as it was when that was computed
/// (no body read), else computed from its hops and kept (unless a hop is still in flight).
pub(super) async fn trace_entry(store: &Store, row: TraceRow) -> anyhow::Result<TraceEntry> {
    let kept = store.kept_summary(&row.id).await?;
    if let Some(entry) = kept
        .summary
        .as_deref()
        .and_then(|json| serde_json::from_str::<TraceEntry>(json).ok())
    {
        return Ok(entry);
    }
    // A summary is made of readings alone: each large request body is let go of once read, and
    // the parts of the readings taken back are not loaded.
    let hops = read_trace_hops(store, &row.id, Bodies::Readings).await?;
    let mut summary = summarize(&hops);
    drop(hops);
    let title = row.title.clone().or(summary.title.take());
    let entry = TraceEntry {
        title,
        ..TraceEntry::new(row, summary)
    };
    if entry.status != TraceStatus::InFlight.as_str()
        && let Ok(json) = serde_json::to_string(&entry)
        && let Err(error) = store.keep_summary(&entry.id, &kept.key, &json).await
    {
        // A listing still lists; the next one computes it again.
        tracing::debug!(%error, "keeping a trace summary");
    }
    Ok(entry)
}

/// The newest `limit` traces with what their hops say about them.
pub async fn list_traces(store: &Store, limit: i64) -> anyhow::Result<Vec<TraceEntry>> {
    let rows: Vec<TraceRow> = store.traces().await?;
    let mut out = Vec::new();
    for row in rows.into_iter().take(usize::try_from(limit).unwrap_or(0)) {
        out.push(trace_entry(store, row).await?);
    }
    // The session of each, as the hop log names it.
    let sessions = store.trace_sessions().await?;
    let rows: std::collections::HashMap<String, tracer_store::sessions::SessionRow> = store
        .sessions()
        .await?
        .into_iter()
        .map(|row| (row.id.clone(), row))
        .collect();
    for entry in &mut out {
        entry.session = sessions
            .get(&entry.id)
            .and_then(|id| rows.get(id))
            .map(SessionEntry::of);
    }
    Ok(out)
}
