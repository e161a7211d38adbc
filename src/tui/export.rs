//! `e` in the TUI: writes a trace as a JSON hop log (the `tracer export --format json` document)
//! to `trace-<id>.json` in the export folder, and says where.

use std::path::{Path, PathBuf};

use crate::export::hop_log::{HopLog, HopLogError};
use crate::store::Store;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    HopLog(#[from] HopLogError),
    #[error("writing {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Writes the trace's hop log into `dir`; returns the file's path.
pub async fn write_trace(
    store: &Store,
    trace_id: &str,
    dir: &Path,
) -> Result<PathBuf, ExportError> {
    let log = HopLog::from_store(store, trace_id).await?;
    let path = dir.join(format!("trace-{}.json", log.trace_id()));
    let path = std::path::absolute(&path).unwrap_or(path);
    tokio::fs::write(&path, log.to_json_pretty())
        .await
        .map_err(|source| ExportError::Write {
            path: path.clone(),
            source,
        })?;
    Ok(path)
}
