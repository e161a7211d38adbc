//! Where a replayed trace comes from: the database (a trace id or a prefix of one) or an
//! exported JSON hop log.

use std::path::Path;

use crate::export::hop_log::{HopLog, HopLogError};
use crate::store::{Store, StoreError};
use crate::trace::RecordedHop;
use crate::trace::correlate::{Bodies, load_read_trace};

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
    #[error("reading {path}: {source}")]
    File {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    HopLog { path: String, source: HopLogError },
    #[error("trace {0} has no hops")]
    Empty(String),
}

/// Whether `what` names a file (an existing path, or one ending in `.json`) rather than a trace id.
pub fn is_file(what: &str) -> bool {
    what.ends_with(".json") || Path::new(what).is_file()
}

/// Reads a trace (by id or unambiguous prefix) and its hops from an open store, every body kept.
pub async fn from_store(store: &Store, id_or_prefix: &str) -> Result<LoadedTrace, SourceError> {
    from_store_with(store, id_or_prefix, Bodies::Kept).await
}

/// Reads a trace as [`from_store`] does, its hops each read once; with [`Bodies::LetGo`], large
/// model request bodies are let go of once read (the TUI fetches one back when it shows it).
pub async fn from_store_with(
    store: &Store,
    id_or_prefix: &str,
    bodies: Bodies,
) -> Result<LoadedTrace, SourceError> {
    let (row, hops) = load_read_trace(store, id_or_prefix, bodies).await?;
    if hops.is_empty() {
        return Err(SourceError::Empty(row.id));
    }
    Ok(LoadedTrace {
        trace_id: row.id,
        title: row.title,
        hops,
    })
}

/// Reads a trace from an exported JSON hop log (`tracer export --format json`).
pub async fn from_file(path: &str) -> Result<LoadedTrace, SourceError> {
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|source| SourceError::File {
            path: path.to_string(),
            source,
        })?;
    let log = HopLog::from_json(&bytes).map_err(|source| SourceError::HopLog {
        path: path.to_string(),
        source,
    })?;
    let hops = log.recorded_hops();
    if hops.is_empty() {
        return Err(SourceError::Empty(log.trace_id().to_string()));
    }
    Ok(LoadedTrace {
        trace_id: log.trace_id().to_string(),
        title: log.title().map(str::to_string),
        hops,
    })
}
