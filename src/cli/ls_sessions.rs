//! `tracer ls --sessions`: sessions newest first (one run of a host each), each with its
//! traces, as blocks of the trace table or one JSON document.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use super::LsArgs;
use super::stdout_text::{emit_json, out, outln};
use super::tables::{now_ns, started, trace_table_at};
use tracer_export::hop_log::{SessionEntry, TraceEntry};
use tracer_store::Store;
use tracer_store::traces::TraceRow;
use tracer_trace::read::dates::needs_dates;
use tracer_trace::words::plural;
use tracer_wire::safe_text::one_line;

/// One session as `ls --sessions --json` lists it (`id` null for the traces grouped before
/// sessions, which belong to none).
#[derive(Debug, Serialize)]
pub struct SessionListing {
    pub id: Option<String>,
    pub host_session_id: Option<String>,
    pub started_unix_ns: i64,
    /// Its traces' tokens and cost, summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<tracer_export::hop_log::TokenEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<tracer_export::hop_log::CostEntry>,
    pub traces: Vec<TraceEntry>,
}

pub async fn run(store: &Store, db: &Path, args: &LsArgs) -> anyhow::Result<()> {
    let sessions = list_sessions(store, args.limit).await?;
    if args.json {
        emit_json(&serde_json::to_value(&sessions)?)?;
        return Ok(());
    }
    if sessions.is_empty() {
        outln!("no sessions recorded in {} yet", db.display())?;
        return Ok(());
    }
    let now = now_ns();
    let dated = needs_dates(sessions.iter().map(|s| s.started_unix_ns), Some(now));
    for (index, session) in sessions.iter().enumerate() {
        if index > 0 {
            outln!()?;
        }
        let head = match &session.id {
            Some(id) => format!(
                "session {}  started {}  {}  host id {}",
                &id[..id.len().min(8)],
                started(session.started_unix_ns, dated),
                plural(session.traces.len(), "trace"),
                session
                    .host_session_id
                    .as_deref()
                    .map_or_else(|| "-".to_string(), |h| one_line(h).into_owned())
            ),
            None => format!(
                "{} in no session (grouped before sessions)",
                plural(session.traces.len(), "trace")
            ),
        };
        outln!("{head}")?;
        if let Some(billed) =
            super::cost_text::billed_line(session.tokens.as_ref(), session.cost.as_ref(), None)
        {
            outln!("  {}", one_line(&billed))?;
        }
        for line in trace_table_at(&session.traces, now).lines() {
            out!("  {line}\n")?;
        }
    }
    Ok(())
}

/// The newest `limit` sessions, each with its traces (oldest first), as `ls` lists traces.
pub async fn list_sessions(store: &Store, limit: i64) -> anyhow::Result<Vec<SessionListing>> {
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
            let entry = super::trace_entries::trace_entry(store, row).await?;
            listing.traces.push(TraceEntry {
                session: session.clone(),
                ..entry
            });
        }
        (listing.tokens, listing.cost) = super::cost_text::summed(&listing.traces);
    }
    Ok(listings)
}
