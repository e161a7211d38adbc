//! One stored hop fed to a grouper: what grouping keeps of it (no bodies), what feeding it did,
//! and the rows a grouping pass writes; shared by the live grouper and the one-shot driver.

use tracer_store::hops::StoredHop;
use tracer_store::sessions::{SessionRow, TracePlace};
use tracer_store::traces::TraceRow;
use tracer_trace::TraceInput;
use tracer_trace::group::{
    Grouper, KnownSession, SESSION_IDLE_NS, SessionDraft, TraceDraft, TraceKind,
};
use tracer_wire::hop::{HopState, Role};

/// Who the `traces` rows this driver writes are `created_by`.
pub const CREATED_BY: &str = "correlate";

/// How far before the earliest unassigned hop the hops that may hold its trace are read.
pub const LOOKBACK_NS: i64 = 15 * 60 * 1_000_000_000;

// A pass must read every hop of a session still open, or it would open that session again.
const _: () = assert!(SESSION_IDLE_NS <= LOOKBACK_NS);

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
            input: crate::load::recorded(stored).trace_input(),
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
/// `place_of` says what the store knows of a stored trace (its kind and session).
pub(crate) fn feed(
    grouper: &mut Grouper,
    seen: &SeenHop,
    place_of: impl Fn(&str) -> Option<TracePlace>,
) -> Fed {
    match &seen.trace_id {
        Some(trace_id) => {
            let place = place_of(trace_id).unwrap_or_default();
            let kind = match place.kind.as_str() {
                "setup" => TraceKind::Setup,
                _ => TraceKind::Request,
            };
            let session = place.session_id.map(|id| KnownSession {
                id,
                host_session: place.host_session_id,
            });
            grouper.place_in_session(&seen.input, trace_id, kind, session.as_ref());
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

/// A session as the grouper drafted it, as a row to write.
pub(crate) fn session_row(draft: SessionDraft) -> SessionRow {
    SessionRow {
        id: draft.id,
        host_session_id: draft.host_session,
        started_unix_ns: draft.started_ns,
        created_by: CREATED_BY.to_string(),
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
