//! The SQLite store: opening a tracer database (WAL, busy timeout, migrations) and its error type.
//!
//! All SQL lives here; callers get typed functions, never SQL strings. The store knows the hop
//! record and its ids (`tracer-wire`) and nothing else of tracer (`scripts/check_layers.py`):
//! grouping, reading and explaining are above it (`tracer-trace` writes no SQL, `tracer-live`
//! drives it over the store). Its API is [`Store`] and its methods, the writer that records hops,
//! and the rows each table gives back; everything else is private or `pub(crate)`, and
//! `unreachable_pub` warns of a `pub` item no other crate can reach.

#![warn(unreachable_pub)]

// Writing: the writer task and its handles (hops through the journal into SQLite), and the
// routes a running proxy serves.
pub mod proxy_routes;
pub mod writer;

// Reading and keeping what readers computed: hops, their bodies, their WebSocket messages,
// readings, traces and sessions, search rows.
pub mod hop_readings;
pub mod hops;
pub mod sessions;
pub mod text_search;
pub mod traces;
mod whole_body;
pub mod ws_frames;

// The agent's own telemetry, kept beside the hops.
pub mod agent_events;

// The faces' own tables: OpenTelemetry export claims, eval runs.
pub mod eval_rows;
pub mod exports;
pub mod forks;

// Inside the store: opening, the journal, chunked bodies, batches and transactions, the SQL
// each of the impl blocks on `Store` in these files runs.
mod body_chunks;
mod body_pieces;
pub mod browse;
mod chunking;
mod hop_columns;
mod hop_insert;
mod journal;
mod journal_codec;
mod journal_intake;
mod journal_reader;
mod journal_ws;
mod open_check;
mod reader;
mod trace_summaries;
mod unread_requests;
mod waiting;
mod write_tx;
mod writer_batch;
mod writer_handle;
mod writer_report;

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

pub use hop_columns::HopRow;
pub use hops::HopListing;
pub use writer::{Recorder, RecorderHandle, WriterReport};

/// The migrations in `migrations/`, embedded at build time (no database needed to build).
pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// How long a statement waits for another writer (another tracer process) before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Pages (of 4 KiB) the WAL holds before a commit checkpoints it (SQLite's default is 1000).
const WAL_AUTOCHECKPOINT_PAGES: &str = "4000";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("opening database {path}: {message}")]
    Open { path: PathBuf, message: String },
    #[error("{path} is not a tracer database ({reason})")]
    NotTracer { path: PathBuf, reason: String },
    #[error("migrating database {path}: {source}")]
    Migrate {
        path: PathBuf,
        source: sqlx::migrate::MigrateError,
    },
    #[error("no database at {}; record one with tracer proxy or tracer demo", .0.display())]
    Missing(PathBuf),
    #[error("{0} not found")]
    NotFound(String),
    #[error("no trace {0} in the database; tracer ls lists the traces it holds")]
    UnknownTrace(String),
    #[error(
        "{} is empty: nothing was recorded into it, and it was left as it is; tracer run, tracer proxy or tracer demo record into a database",
        .0.display()
    )]
    EmptyFile(PathBuf),
    #[error("trace prefix {0} matches more than one trace; give more of its id")]
    AmbiguousTrace(String),
    #[error("stored data is malformed: {0}")]
    Malformed(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A handle on one tracer database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
    /// Rows that could not be read (a column of the wrong type, malformed JSON): skipped by the
    /// readers, so one bad row never hides the rest, and counted here.
    unreadable: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Store {
    /// Opens (creating if missing) a tracer database and brings its schema up to date.
    ///
    /// A file that is not SQLite, or an SQLite database that tracer did not create, is refused
    /// rather than migrated. A read-only file or a locked database is an error here, at start.
    pub async fn open(path: &Path) -> Result<Store> {
        let open_err = |message: String| StoreError::Open {
            path: path.to_path_buf(),
            message,
        };
        if open_check::inspect(path).await? == open_check::Found::Missing
            && let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|e| open_err(e.to_string()))?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true)
            // A checkpoint once the WAL holds 16 MiB, not 4: a page written again and again
            // between two (the newest rows' pages, the index tails) goes back to the file once.
            .pragma("wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)
            // Functions named in the schema run only when SQLite deems them harmless.
            .pragma("trusted_schema", "OFF");
        let file = path.to_path_buf();
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            // SQLite opens a file it cannot write read-only, for the connection's whole life: a
            // connection opened while the file was briefly unwritable (chattr +i) would fail
            // every write after the file recovered. The pool keeps no such connection.
            .after_connect(move |_, _| {
                let file = file.clone();
                Box::pin(async move { writable(&file).await })
            })
            .connect_with(options)
            .await
            .map_err(|e| open_err(describe_sqlx(&e)))?;
        let store = Store {
            pool,
            path: path.to_path_buf(),
            unreadable: Default::default(),
        };
        store.check_is_tracer().await?;
        MIGRATOR
            .run(&store.pool)
            .await
            .map_err(|source| StoreError::Migrate {
                path: path.to_path_buf(),
                source,
            })?;
        // Prove we can write now, so a read-only file or a held lock fails at start.
        sqlx::query("insert into counters (name, value) values ('opened', 1) on conflict(name) do update set value = value + 1")
            .execute(&store.pool)
            .await
            .map_err(|e| open_err(describe_sqlx(&e)))?;
        Ok(store)
    }

    /// Opens a database that must exist already (the reading commands): a missing file is an
    /// error, and nothing is created. Journals that killed recorders left are taken in.
    pub async fn open_existing(path: &Path) -> Result<Store> {
        match open_check::inspect(path).await? {
            open_check::Found::Missing => return Err(StoreError::Missing(path.to_path_buf())),
            // A reader must not make a file it was pointed at into a database.
            open_check::Found::Empty => return Err(StoreError::EmptyFile(path.to_path_buf())),
            open_check::Found::Tracer => {}
        }
        let store = Store::open(path).await?;
        // What a killed recorder left in its journal belongs in what is read now.
        journal_intake::take_in_left_journals(&store).await;
        Ok(store)
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many rows the readers of this handle skipped because they could not be read.
    pub fn unreadable_rows(&self) -> u64 {
        self.unreadable.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts one row a reader skipped.
    fn skip_unreadable(&self) {
        self.unreadable
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Closes the pool, checkpointing the WAL.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn check_is_tracer(&self) -> Result<()> {
        let not_tracer = |reason: String| StoreError::NotTracer {
            path: self.path.clone(),
            reason,
        };
        let tables: Vec<String> = sqlx::query(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| not_tracer(describe_sqlx(&e)))?
        .iter()
        .map(|row| row.get::<String, _>("name"))
        .collect();
        if tables.is_empty()
            || tables.iter().any(|t| t == "_sqlx_migrations") && tables.iter().any(|t| t == "hops")
        {
            return Ok(());
        }
        Err(not_tracer(format!(
            "it has other tables: {}",
            tables.join(", ")
        )))
    }

    /// Adds `delta` to a named counter (e.g. `hops_not_written`).
    pub async fn add_to_counter(&self, name: &str, delta: i64) -> Result<()> {
        sqlx::query("insert into counters (name, value) values (?1, ?2) on conflict(name) do update set value = value + ?2")
            .bind(name)
            .bind(delta)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// A counter's value, 0 when it was never set.
    pub async fn counter(&self, name: &str) -> Result<i64> {
        let value: Option<i64> = sqlx::query_scalar("select value from counters where name = ?1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(value.unwrap_or(0))
    }
}

/// Ok when `path` can be opened for writing (so SQLite did not open it read-only).
async fn writable(path: &Path) -> std::result::Result<(), sqlx::Error> {
    // Asked of the kernel, never by opening the file: closing a descriptor of the database drops
    // every POSIX lock this process holds on it, the locks by which another process's SQLite
    // sees tracer's connections (without them, its close would checkpoint the database and
    // remove the write-ahead log tracer still writes to). `access` fails on an immutable file, a
    // read-only file system and missing permissions, as SQLite's own open for writing does.
    nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).map_err(|errno| {
        let error = std::io::Error::from(errno);
        sqlx::Error::Io(std::io::Error::new(
            error.kind(),
            format!(
                "{} cannot be written (SQLite would open it read-only): {error}",
                path.display()
            ),
        ))
    })
}

/// The counter of hops that traffic carried but the store could not keep.
pub const HOPS_NOT_WRITTEN: &str = "hops_not_written";

/// SQLite's own words for the common failures, without sqlx's wrapping.
fn describe_sqlx(error: &sqlx::Error) -> String {
    match error {
        sqlx::Error::Database(db) => db.message().to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn opens_creates_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/t.db");
        let store = Store::open(&path).await.unwrap();
        store.add_to_counter("x", 2).await.unwrap();
        store.close().await;
        let store = Store::open(&path).await.unwrap();
        assert_eq!(store.counter("x").await.unwrap(), 2);
        assert_eq!(store.counter("never").await.unwrap(), 0);
    }

    #[tokio::test]
    async fn connections_checkpoint_the_wal_at_sixteen_mib() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).await.unwrap();
        let pages: i64 = sqlx::query_scalar("pragma wal_autocheckpoint")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(pages.to_string(), WAL_AUTOCHECKPOINT_PAGES);
    }

    #[tokio::test]
    async fn refuses_files_that_are_not_tracer_databases() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(
            &text,
            "this is not sqlite at all, just some text that is long enough",
        )
        .unwrap();
        let err = Store::open(&text).await.unwrap_err().to_string();
        assert!(err.contains("notes.txt"), "{err}");

        let other = dir.path().join("other.db");
        let pool = SqlitePool::connect(&format!("sqlite://{}?mode=rwc", other.display()))
            .await
            .unwrap();
        sqlx::query("create table people (name text)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let err = Store::open(&other).await.unwrap_err().to_string();
        assert!(err.contains("is not a tracer database"), "{err}");
        assert!(err.contains("people"), "{err}");
    }
}
