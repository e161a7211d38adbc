//! Looking at a database file before tracer changes anything in it: a file of another program
//! is refused byte-identical (no WAL switch, no `-wal`/`-shm` left), a missing file is created
//! only by commands that record, and a path under a regular file is named as such.

use std::io::Read;
use std::path::{Path, PathBuf};

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Row};

use super::{Result, StoreError};

/// What is at a database path.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// Nothing: a new database will be created.
    Missing,
    /// An empty file, or an SQLite database with no tables: tracer may make it its own.
    Empty,
    /// A tracer database.
    Tracer,
}

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Looks at `path` without writing anything; refuses what tracer must not touch.
pub async fn inspect(path: &Path) -> Result<Found> {
    let open_err = |message: String| StoreError::Open {
        path: path.to_path_buf(),
        message,
    };
    let not_tracer = |reason: String| StoreError::NotTracer {
        path: path.to_path_buf(),
        reason,
    };
    if let Some(file) = file_above(path) {
        return Err(open_err(format!(
            "{} is a file, not a folder",
            file.display()
        )));
    }
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(error) => return Err(open_err(error.to_string())),
    };
    if metadata.is_dir() {
        return Err(open_err("it is a folder, not a database file".into()));
    }
    if metadata.len() == 0 {
        return Ok(Found::Empty);
    }
    let mut head = [0u8; 20];
    let read = std::fs::File::open(path)
        .and_then(|mut file| file.read(&mut head))
        .map_err(|e| open_err(e.to_string()))?;
    if read < head.len() || &head[..16] != SQLITE_MAGIC {
        return Err(not_tracer("it is not an SQLite database".into()));
    }
    // Read-only, so nothing is written. A WAL database whose -wal file is gone has all of its
    // content in the main file: it is read as immutable, so SQLite creates no -wal or -shm.
    let in_wal_mode = head[18] == 2 && head[19] == 2;
    let wal_left = PathBuf::from(format!("{}-wal", path.display())).exists();
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .immutable(in_wal_mode && !wal_left)
        .disable_statement_logging()
        .connect()
        .await
        .map_err(|e| not_tracer(e.to_string()))?;
    let tables: Vec<String> = sqlx::query(
        "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'",
    )
    .fetch_all(&mut conn)
    .await
    .map_err(|e| not_tracer(e.to_string()))?
    .iter()
    .map(|row| row.get::<String, _>("name"))
    .collect();
    let _ = conn.close().await;
    if tables.is_empty() {
        return Ok(Found::Empty);
    }
    if tables.iter().any(|t| t == "_sqlx_migrations") && tables.iter().any(|t| t == "hops") {
        return Ok(Found::Tracer);
    }
    Err(not_tracer(format!(
        "it has other tables: {}",
        tables.join(", ")
    )))
}

/// The nearest existing ancestor folder of `path`, when it is a regular file instead.
fn file_above(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .filter(|p| !p.as_os_str().is_empty())
        .find(|p| p.exists())
        .filter(|p| !p.is_dir())
        .map(Path::to_path_buf)
}
