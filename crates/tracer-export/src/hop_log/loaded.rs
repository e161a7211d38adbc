//! The hop log and the one loaded trace (`tracer_live::load::LoadedTrace`), each made from the
//! other: a stored trace's log is made from the trace as the loader gives it, and a hop-log file
//! read back gives the trace `tracer import` would store (for replay and re-explaining).

use super::{Bodies, HopLog, HopLogError, IMPORTED_BY, SessionEntry};
use tracer_live::load::{Bodies as HopBodies, LoadedTrace, load_trace};
use tracer_store::Store;
use tracer_store::sessions::SessionRow;
use tracer_store::traces::TraceRow;

impl HopLog {
    /// The hop log of a stored trace, by its id or an unambiguous prefix of it, every body in it.
    pub async fn from_store(
        store: &Store,
        trace_id_or_prefix: &str,
    ) -> Result<HopLog, HopLogError> {
        let trace = load_trace(store, trace_id_or_prefix, HopBodies::Kept).await?;
        Ok(HopLog::from_loaded(&trace, Bodies::Kept))
    }

    /// The log of a loaded trace, its entries carrying the bodies the trace was loaded with
    /// (`Bodies::Kept`; a body let go of is written by [`HopLog::streamed`]) or only their
    /// lengths (`Bodies::LengthsOnly`, for the faces that read the hops themselves).
    pub fn from_loaded(trace: &LoadedTrace, bodies: Bodies) -> HopLog {
        let mut log = HopLog::from_recorded_with(trace.row.clone(), &trace.hops, bodies);
        log.trace.session = trace.session.as_ref().map(SessionEntry::of);
        log
    }

    /// The trace this log holds, as `tracer import` would store it: its row and session
    /// written by import, its hops rebuilt exactly as they were recorded.
    pub fn loaded(&self) -> LoadedTrace {
        LoadedTrace {
            row: self.imported_row(),
            session: self.imported_session(),
            hops: self.recorded_hops(),
        }
    }

    /// As [`HopLog::loaded`], saying which part of the log disagrees with the rest.
    pub(super) fn loaded_checked(&self) -> Result<LoadedTrace, HopLogError> {
        Ok(LoadedTrace {
            row: self.imported_row(),
            session: self.imported_session(),
            hops: self.recorded_hops_checked()?,
        })
    }

    fn imported_row(&self) -> TraceRow {
        TraceRow {
            id: self.trace.id.clone(),
            title: self.trace.title.clone(),
            kind: self.trace.kind.clone(),
            started_unix_ns: self.trace.started_unix_ns,
            ended_unix_ns: self.trace.ended_unix_ns,
            created_by: IMPORTED_BY.to_string(),
        }
    }

    /// The session row `tracer import` writes for the log's session, if it names one.
    pub(super) fn imported_session(&self) -> Option<SessionRow> {
        (self.trace.session.as_ref()).map(|session| SessionRow {
            id: session.id.clone(),
            host_session_id: session.host_session_id.clone(),
            started_unix_ns: self.trace.started_unix_ns,
            created_by: IMPORTED_BY.to_string(),
        })
    }
}
