//! Loading a stored trace for reading, the one way every face does it: [`load_trace`] finds the
//! trace by its id or an unambiguous prefix and gives a [`LoadedTrace`] (its row, its session,
//! its hops each read once); [`read_trace_hops`] gives the hops alone when the id is known, and
//! [`hops_as_recorded`] the hops as they were recorded, not read (no turns, no kept readings).
//!
//! What the faces differ in is said by [`Bodies`]: every body kept (replay, the hop log with its
//! bodies, `--changes`), large model request bodies let go of once read (the TUI, `show`, the
//! handouts, which fetch one back when they print it), or the readings alone (`tracer ls`).

use tracer_store::hops::StoredHop;
use tracer_store::sessions::SessionRow;
use tracer_store::traces::TraceRow;
use tracer_store::{Result, Store};
use tracer_trace::RecordedHop;

/// One trace loaded for reading: what the store says of it and its hops, in start order.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedTrace {
    /// Its row: id, title, kind, when it started and ended, who grouped it.
    pub row: TraceRow,
    /// The session (one run of a host) it belongs to; none when grouping named none.
    pub session: Option<SessionRow>,
    /// Its hops, each read once (a WebSocket's Responses turns among them).
    pub hops: Vec<RecordedHop>,
}

impl LoadedTrace {
    pub fn id(&self) -> &str {
        &self.row.id
    }

    /// The title grouping gave it (the user's text that opened it), if any.
    pub fn title(&self) -> Option<&str> {
        self.row.title.as_deref()
    }
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

/// A trace by its id or an unambiguous prefix, with its session and its hops each read once
/// (see [`read_trace_hops`]). An id that names no trace is `StoreError::UnknownTrace`, one that
/// names several `StoreError::AmbiguousTrace`.
pub async fn load_trace(store: &Store, id_or_prefix: &str, bodies: Bodies) -> Result<LoadedTrace> {
    let row = store.trace(id_or_prefix).await?;
    let hops = read_trace_hops(store, &row.id, bodies).await?;
    let session = store.session_of_trace(&row.id).await?;
    Ok(LoadedTrace { row, session, hops })
}

/// A stored hop as the readers read it (an old record of a client that stopped reading after
/// the last event reads complete: `settle_old_record`).
pub fn recorded(stored: StoredHop) -> RecordedHop {
    let mut end = stored.end;
    tracer_trace::settle_old_record(&mut end);
    RecordedHop {
        read: Default::default(),
        start: stored.start,
        end: Some(end),
    }
}

/// The hops of one stored trace as recorded, in start order, each settled ([`recorded`]) and not
/// read: no Responses turns of a WebSocket, no readings kept or taken back. For the passes over
/// many traces that look at each once (`tracer mcp`'s listing and tool statistics, the live
/// exporter), which read what they need of each hop themselves.
pub async fn hops_as_recorded(store: &Store, trace_id: &str) -> Result<Vec<RecordedHop>> {
    let stored = store.trace_hops(trace_id).await?;
    Ok(stored.into_iter().map(recorded).collect())
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
    let mut shared = tracer_trace::read::read_once::SharedTexts::default();
    let mut hops = Vec::new();
    let skippable: std::collections::HashSet<String> = match bodies {
        Bodies::LetGo | Bodies::Readings => (kept.iter())
            .filter(|(_, k)| k.body_not_needed())
            .map(|(id, _)| id.clone())
            .collect(),
        Bodies::Kept => Default::default(),
    };
    let agent = tracer_wire::hop::Role::Agent.as_str();
    let skip_request = |id: &str, role: &str| role != agent && skippable.contains(id);
    store
        .each_trace_hop_skipping(trace_id, skip_request, |stored| {
            let mut hop = recorded(stored);
            if hop.end.as_ref().is_some_and(|e| e.websocket.is_none()) {
                match kept.remove(&hop.start.id) {
                    Some(request) => request.give_to(&hop),
                    None => {
                        tracer_trace::read::recorded_hop::read_into(&hop, &mut shared);
                        to_keep.add(&hop);
                    }
                }
                if bodies != Bodies::Kept {
                    tracer_trace::read::recorded_hop::let_go_of_request_body(&mut hop);
                }
            }
            hops.push(hop);
        })
        .await?;
    if let Err(error) = to_keep.write(store).await {
        // A database that cannot be written to is still read: the readings are made again.
        tracing::debug!(%error, "keeping the readings of trace {trace_id}");
    }
    let hops = tracer_trace::read::ws_turns::with_turns(hops);
    for hop in &hops {
        tracer_trace::read::recorded_hop::read_into(hop, &mut shared);
    }
    Ok(hops)
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
