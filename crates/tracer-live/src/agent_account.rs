//! The agent's own account of a trace: the telemetry events stored beside its hops (by its
//! session, its `tracer run`, its time) placed at their steps (`tracer_trace::account::agent_join`),
//! and the events no trace of the database claims.

use tracer_store::agent_events::{EventQuery, StoredAgentEvent};
use tracer_store::{Result, Store};
use tracer_trace::account::agent_join::{self, JoinRule, TraceBounds};

use crate::load::LoadedTrace;

/// How far before a trace's first hop an event with no id is still its own (an MCP server
/// connecting, a hook on the prompt), and after its last.
const BEFORE_NS: i64 = 10_000_000_000;
const AFTER_NS: i64 = 2_000_000_000;

/// One event at its place in a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedEvent {
    pub stored: StoredAgentEvent,
    /// After this hop (its index in the trace's hops); None: before the first.
    pub after: Option<usize>,
    /// The hop it is the agent's account of, when it is one call's.
    pub of_hop: Option<usize>,
    pub rule: JoinRule,
}

/// The events of a trace, placed, in order of their places.
pub async fn for_trace(store: &Store, trace: &LoadedTrace) -> Result<Vec<PlacedEvent>> {
    let Some(bounds) = bounds(trace) else {
        return Ok(Vec::new());
    };
    let sessions: Vec<String> = bounds.session.iter().cloned().collect();
    let query = EventQuery {
        sessions: &sessions,
        runs: &bounds.runs,
        loose_window: Some((bounds.from_ns, bounds.to_ns)),
    };
    let stored = store.agent_events(&query).await?;
    Ok(place(trace, stored, &bounds))
}

/// The session, runs and time window of a trace's hops; None for a trace with no hops.
fn bounds(trace: &LoadedTrace) -> Option<TraceBounds> {
    let first = trace.hops.first()?.start.started_unix_ns;
    let last = (trace.hops.iter())
        .map(|h| {
            let end = h.end.as_ref();
            end.and_then(|e| e.response_ended_unix_ns.or(e.response_head_unix_ns))
                .unwrap_or(h.start.started_unix_ns)
        })
        .max()?;
    let mut runs: Vec<String> = trace
        .hops
        .iter()
        .filter_map(|h| h.start.run_id.clone())
        .collect();
    runs.sort();
    runs.dedup();
    Some(TraceBounds {
        session: trace
            .session
            .as_ref()
            .and_then(|s| s.host_session_id.clone()),
        runs,
        from_ns: first - BEFORE_NS,
        to_ns: last + AFTER_NS,
    })
}

fn place(
    trace: &LoadedTrace,
    stored: Vec<StoredAgentEvent>,
    bounds: &TraceBounds,
) -> Vec<PlacedEvent> {
    let events: Vec<_> = stored
        .iter()
        .map(|s| (&s.event, s.run_id.as_deref()))
        .collect();
    let placed = agent_join::place(&trace.hops, &events, bounds);
    placed
        .into_iter()
        .map(|p| PlacedEvent {
            stored: stored[p.event].clone(),
            after: p.after,
            of_hop: p.of_hop,
            rule: p.rule,
        })
        .collect()
}

/// The stored events that no trace claims, oldest first, with the session each names.
pub async fn unplaced(store: &Store) -> Result<Vec<StoredAgentEvent>> {
    let all = store.all_agent_events().await?;
    if all.is_empty() {
        return Ok(all);
    }
    let mut claimed = std::collections::HashSet::new();
    for row in store.traces().await? {
        let trace = crate::load::load_trace(store, &row.id, crate::load::Bodies::Readings).await?;
        for placed in for_trace(store, &trace).await? {
            claimed.insert(placed.stored.id);
        }
    }
    Ok(all
        .into_iter()
        .filter(|e| !claimed.contains(&e.id))
        .collect())
}
