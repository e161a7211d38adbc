//! Looking at a database file before tracer changes anything in it: a file of another program
//! is refused byte-identical (no WAL switch, no `-wal`/`-shm` left), a missing file is created
//! only by commands that record, a path under a regular file is named as such, and a file whose
//! schema holds what tracer's migrations never make (views, triggers, virtual tables, generated
//! columns: `traces` or `hops` that are not plain tables) is refused before its code could run.

use std::io::Read;
use std::path::{Path, PathBuf};

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Row};

use super::{Result, StoreError};

/// What is at a database path.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing: a new database will be created.
    Missing,
    /// An empty file, or an SQLite database with no tables: tracer may make it its own.
    Empty,
    /// A tracer database.
    Tracer,
}

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Looks at `path` without writing anything; refuses what tracer must not touch.
pub(crate) async fn inspect(path: &Path) -> Result<Found> {
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
    let objects = schema_objects(&mut conn).await;
    let _ = conn.close().await;
    let objects = objects.map_err(not_tracer)?;
    let foreign: Vec<String> = objects
        .iter()
        .filter(|(kind, _)| FOREIGN_KINDS.contains(&kind.as_str()))
        .map(|(kind, name)| format!("{kind} {name}"))
        .collect();
    let tables: Vec<&str> = objects
        .iter()
        .filter(|(kind, name)| kind == "table" && !name.starts_with("sqlite_"))
        .map(|(_, name)| name.as_str())
        .collect();
    if !foreign.is_empty() {
        // Tracer's migrations make no view, trigger, virtual table or generated column: code in
        // one would run on tracer's reads or writes (a recursive view never ends, a trigger acts
        // on every insert, a generated column computes on every read).
        return Err(not_tracer(format!(
            "it holds what tracer never makes: {}",
            foreign.join(", ")
        )));
    }
    if tables.is_empty() {
        return Ok(Found::Empty);
    }
    if tables.contains(&"_sqlx_migrations") && tables.contains(&"hops") {
        return Ok(Found::Tracer);
    }
    Err(not_tracer(format!(
        "it has other tables: {}",
        tables.join(", ")
    )))
}

/// Kinds of schema objects tracer's migrations never make.
const FOREIGN_KINDS: [&str; 4] = ["view", "trigger", "virtual table", "generated column"];

/// Every object of the schema as (kind, name): `table`, `index`, `view`, `trigger`, and
/// `virtual table` or `generated column` (named `table.column`) where the schema has them. A
/// name that is not text is an error.
async fn schema_objects(
    conn: &mut sqlx::SqliteConnection,
) -> std::result::Result<Vec<(String, String)>, String> {
    let rows = sqlx::query(
        "select case when type = 'table' and sql like 'create virtual table%'
                     then 'virtual table' else type end as type, name
         from sqlite_master
         union all
         select 'generated column', m.name || '.' || c.name
         from sqlite_master m, pragma_table_xinfo(m.name) c
         where m.type = 'table' and m.sql not like 'create virtual table%' and c.hidden in (2, 3)",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(|e| e.to_string())?;
    rows.iter()
        .map(|row| {
            let kind = row.try_get::<String, _>("type");
            let name = row.try_get::<String, _>("name");
            match (kind, name) {
                (Ok(kind), Ok(name)) => Ok((kind, name)),
                _ => Err("its schema has an object whose name is not text".to_string()),
            }
        })
        .collect()
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
