//! A trace loaded for the faces that read its hops themselves (`tracer show`, the exports other
//! than json): the hops as the store gives them, and their log with each body's length only, so
//! no body is copied into the log nor rebuilt from it.

use super::{Bodies, HopLog, HopLogError, SessionEntry};
use crate::store::Store;
use crate::trace::RecordedHop;
use crate::trace::correlate::load_trace;

impl HopLog {
    /// The trace's log (bodies as lengths) and its hops (bodies whole).
    pub async fn summaries_from_store(
        store: &Store,
        trace_id_or_prefix: &str,
    ) -> Result<(HopLog, Vec<RecordedHop>), HopLogError> {
        let (row, hops) = load_trace(store, trace_id_or_prefix).await?;
        let session = store.session_of_trace(&row.id).await?;
        let mut log = HopLog::from_recorded_with(row, &hops, Bodies::LengthsOnly);
        log.trace.session = session.as_ref().map(SessionEntry::of);
        Ok((log, hops))
    }
}
