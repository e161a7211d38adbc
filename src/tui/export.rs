//! `e` in the TUI: writes a trace as a JSON hop log (the `tracer export --format json` document)
//! to `trace-<id>.json` in the export folder (never outside it, whatever the id), and says where.

use std::path::{Path, PathBuf};

use tracer_export::hop_log::{HopLog, HopLogError};
use tracer_store::Store;

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
    let path = dir.join(file_name(log.trace_id()));
    let path = std::path::absolute(&path).unwrap_or(path);
    tokio::fs::write(&path, log.to_json_pretty())
        .await
        .map_err(|source| ExportError::Write {
            path: path.clone(),
            source,
        })?;
    Ok(path)
}

/// `trace-<id>.json`, with every character of the id that is not a letter, digit, `-` or `_`
/// replaced: an id read from a database names a file in the export folder, never a path.
fn file_name(trace_id: &str) -> String {
    let safe: String = trace_id
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("trace-{safe}.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_id_never_leaves_the_export_folder() {
        assert_eq!(
            file_name("0af7651916cd43dd8448eb211c80319c"),
            "trace-0af7651916cd43dd8448eb211c80319c.json"
        );
        assert_eq!(file_name("../../etc/x"), "trace-______etc_x.json");
        assert_eq!(file_name("/abs\\path"), "trace-_abs_path.json");
        let dir = Path::new("/exports");
        for id in ["../up", "/root/x", "a/../../b", "..", "c:\\x"] {
            let path = dir.join(file_name(id));
            assert_eq!(path.parent(), Some(dir), "{id}");
        }
    }
}
