//! A trace loaded for the faces that read its hops themselves (`tracer show`, the exports other
//! than json): the hops as the store gives them, and their log with each body's length only, so
//! no body is copied into the log nor rebuilt from it.

use super::{Bodies, HopLog, HopLogError, SessionEntry};
use crate::store::Store;
use crate::trace::RecordedHop;
use crate::trace::correlate::{Bodies as HopBodies, load_read_trace};

impl HopLog {
    /// The trace's log (bodies as lengths) and its hops, each read once, their bodies whole or
    /// (`HopBodies::LetGo`, for faces that print no body) large request bodies let go of.
    pub async fn summaries_from_store(
        store: &Store,
        trace_id_or_prefix: &str,
        hop_bodies: HopBodies,
    ) -> Result<(HopLog, Vec<RecordedHop>), HopLogError> {
        let (row, hops) = load_read_trace(store, trace_id_or_prefix, hop_bodies).await?;
        let session = store.session_of_trace(&row.id).await?;
        let mut log = HopLog::from_recorded_with(row, &hops, Bodies::LengthsOnly);
        log.trace.session = session.as_ref().map(SessionEntry::of);
        Ok((log, hops))
    }
}
