//! Where a replayed trace comes from: the database (a trace id or a prefix of one, read by the
//! one loader, `tracer_live::load`) or an exported JSON hop log (the trace `tracer import` would
//! store from it). Either way a `LoadedTrace`.

use std::path::Path;

use tracer_export::hop_log::{HopLog, HopLogError};
use tracer_live::load::{Bodies, LoadedTrace, load_trace};
use tracer_store::{Store, StoreError};

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

/// Reads a trace from a hop-log file, or from the store when there is one and `what` is a trace
/// id or prefix rather than a file.
pub async fn from_file_or_store(
    store: Option<&Store>,
    what: &str,
) -> Result<LoadedTrace, SourceError> {
    match store {
        Some(store) if !is_file(what) => from_store(store, what).await,
        _ => from_file(what).await,
    }
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
    let trace = load_trace(store, id_or_prefix, bodies).await?;
    if trace.hops.is_empty() {
        return Err(SourceError::Empty(trace.row.id));
    }
    Ok(trace)
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
    let trace = log.loaded();
    if trace.hops.is_empty() {
        return Err(SourceError::Empty(trace.row.id));
    }
    Ok(trace)
}
