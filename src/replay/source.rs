//! Where a replayed trace comes from: the database (a trace id or a prefix of one) or an
//! exported JSON hop log.

use std::path::Path;

use crate::store::{Store, StoreError};
use crate::trace::RecordedHop;

/// A trace ready to be shown: its id, title and hops.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedTrace {
    pub trace_id: String,
    pub title: Option<String>,
    pub hops: Vec<RecordedHop>,
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("reading {path}: {message}")]
    File { path: String, message: String },
    #[error("trace {0} has no hops")]
    Empty(String),
}

/// Whether `what` names a file (an existing path, or one ending in `.json`) rather than a trace id.
pub fn is_file(what: &str) -> bool {
    what.ends_with(".json") || Path::new(what).is_file()
}

/// Reads a trace (by id or unambiguous prefix) and its hops from an open store.
pub async fn from_store(store: &Store, id_or_prefix: &str) -> Result<LoadedTrace, SourceError> {
    let row = store.trace(id_or_prefix).await?;
    let hops: Vec<RecordedHop> = store
        .trace_hops(&row.id)
        .await?
        .into_iter()
        .map(RecordedHop::from)
        .collect();
    if hops.is_empty() {
        return Err(SourceError::Empty(row.id));
    }
    Ok(LoadedTrace {
        trace_id: row.id,
        title: row.title,
        hops,
    })
}
