//! What the listings say of traces and sessions (`tracer ls`, `ls --sessions`, `tracer search`
//! `--json`, the web UI's lists): one shape for every face.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::json;

use crate::body_text::iso8601_utc;
use crate::hop_log::{CostEntry, ForkEntry, SessionEntry, TokenEntry, TraceEntry};
use tracer_live::load::{Bodies, read_trace_hops};
use tracer_live::search::SearchReport;
use tracer_store::traces::TraceRow;
use tracer_store::{Result, Store};
use tracer_trace::TokenCounts;
use tracer_trace::account::cost::CostSum;
use tracer_trace::account::summary::TraceStatus;
use tracer_trace::summarize;

/// One trace as listed: its kept summary while the trace is as it was when that was computed
/// (no body read), else computed from its hops and kept (unless a hop is still in flight).
pub async fn trace_entry(store: &Store, row: TraceRow) -> Result<TraceEntry> {
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
pub async fn list_traces(store: &Store, limit: i64) -> Result<Vec<TraceEntry>> {
    list_traces_page(store, 0, limit).await
}

/// At most `limit` traces after the newest `offset`, with what their hops say about them and
/// their sessions: one page of `list_traces`.
pub async fn list_traces_page(store: &Store, offset: i64, limit: i64) -> Result<Vec<TraceEntry>> {
    let rows = store.traces_page(offset, limit).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(trace_entry(store, row).await?);
    }
    with_sessions(store, &mut out).await?;
    Ok(out)
}

/// Each entry with its session, as the hop log names it.
pub async fn with_sessions(store: &Store, entries: &mut [TraceEntry]) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let sessions = store.trace_sessions().await?;
    let rows: HashMap<String, tracer_store::sessions::SessionRow> = store
        .sessions()
        .await?
        .into_iter()
        .map(|row| (row.id.clone(), row))
        .collect();
    let forks: HashMap<String, tracer_store::forks::ForkRow> = (store.fork_traces().await?)
        .into_iter()
        .filter_map(|row| Some((row.trace_id.clone()?, row)))
        .collect();
    for entry in entries {
        entry.session = sessions
            .get(&entry.id)
            .and_then(|id| rows.get(id))
            .map(SessionEntry::of);
        entry.fork = forks.get(&entry.id).map(ForkEntry::of);
    }
    Ok(())
}

/// One session as `ls --sessions --json` lists it (`id` null for the traces grouped before
/// sessions, which belong to none).
#[derive(Debug, Serialize)]
pub struct SessionListing {
    pub id: Option<String>,
    pub host_session_id: Option<String>,
    pub started_unix_ns: i64,
    /// Its traces' tokens and cost, summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostEntry>,
    pub traces: Vec<TraceEntry>,
}

/// The newest `limit` sessions, each with its traces (oldest first), as `ls` lists traces.
pub async fn list_sessions(store: &Store, limit: i64) -> Result<Vec<SessionListing>> {
    let of_trace = store.trace_sessions().await?;
    let mut traces: HashMap<Option<String>, Vec<TraceRow>> = HashMap::new();
    for row in store.traces().await? {
        traces
            .entry(of_trace.get(&row.id).cloned())
            .or_default()
            .push(row);
    }
    let mut listings: Vec<SessionListing> = store
        .sessions()
        .await?
        .into_iter()
        .filter(|s| traces.contains_key(&Some(s.id.clone())))
        .map(|s| SessionListing {
            id: Some(s.id),
            host_session_id: s.host_session_id,
            started_unix_ns: s.started_unix_ns,
            tokens: None,
            cost: None,
            traces: Vec::new(),
        })
        .collect();
    if let Some(orphans) = traces.get(&None) {
        listings.push(SessionListing {
            id: None,
            host_session_id: None,
            started_unix_ns: orphans.iter().map(|t| t.started_unix_ns).min().unwrap_or(0),
            tokens: None,
            cost: None,
            traces: Vec::new(),
        });
    }
    listings.sort_by_key(|s| std::cmp::Reverse(s.started_unix_ns));
    listings.truncate(usize::try_from(limit).unwrap_or(0));
    for listing in &mut listings {
        let mut rows = traces.remove(&listing.id).unwrap_or_default();
        rows.sort_by_key(|t| t.started_unix_ns);
        let session = listing.id.as_ref().map(|id| SessionEntry {
            id: id.clone(),
            host_session_id: listing.host_session_id.clone(),
        });
        for row in rows {
            let entry = trace_entry(store, row).await?;
            listing.traces.push(TraceEntry {
                session: session.clone(),
                ..entry
            });
        }
        (listing.tokens, listing.cost) = summed(&listing.traces);
    }
    Ok(listings)
}

/// The tokens and cost of many traces, summed (a session's).
pub fn summed(traces: &[TraceEntry]) -> (Option<TokenEntry>, Option<CostEntry>) {
    let tokens = TokenCounts::sum(
        traces
            .iter()
            .filter_map(|t| t.tokens.map(|t| t.counts()))
            .collect::<Vec<_>>()
            .iter(),
    );
    let mut cost = CostSum::default();
    for trace in traces {
        if let Some(entry) = &trace.cost {
            cost.add_sum(&entry.sum());
        }
    }
    (TokenEntry::of(&tokens), CostEntry::of_sum(&cost))
}

/// `tracer search --json`: `{"text", "traces": [{"id", "title", "started", "in_title",
/// "messages": [{"number", "direction", "excerpt"}]}], "more", "ungrouped_hops"}`.
pub fn search_json(report: &SearchReport) -> serde_json::Value {
    let traces: Vec<serde_json::Value> = report
        .traces
        .iter()
        .map(|trace| {
            json!({
                "id": trace.id,
                "title": trace.title,
                "started": iso8601_utc(trace.started_unix_ns),
                "in_title": trace.in_title,
                "messages": trace.messages,
            })
        })
        .collect();
    json!({
        "text": report.text,
        "traces": traces,
        "more": report.more,
        "ungrouped_hops": report.ungrouped_hops,
    })
}
