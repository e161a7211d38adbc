//! Opening a tracer database for reading only (`tracer mcp` never writes), and the body search
//! that readers offer.

use std::path::Path;

use futures_util::TryStreamExt;
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

use super::{BUSY_TIMEOUT, MIGRATOR, Result, Store, StoreError, describe_sqlx};

/// One hop whose body holds a searched text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyMatch {
    pub hop_id: String,
    /// None while the hop is not grouped into a trace yet.
    pub trace_id: Option<String>,
    pub in_request: bool,
    pub in_response: bool,
}

impl Store {
    /// Opens an existing tracer database read-only: nothing is created, migrated or written (the
    /// connection is opened with SQLite's read-only flag). A database made by an older tracer,
    /// whose schema is behind this build, is refused with a clear message.
    pub async fn open_read_only(path: &Path) -> Result<Store> {
        let open_err = |message: String| StoreError::Open {
            path: path.to_path_buf(),
            message,
        };
        if super::open_check::inspect(path).await? == super::open_check::Found::Missing {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .read_only(true)
            .busy_timeout(BUSY_TIMEOUT)
            // Functions named in the schema run only when SQLite deems them harmless.
            .pragma("trusted_schema", "OFF");
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|e| open_err(describe_sqlx(&e)))?;
        let store = Store {
            pool,
            path: path.to_path_buf(),
            unreadable: Default::default(),
        };
        store.check_is_tracer().await?;
        store.check_schema_current().await?;
        Ok(store)
    }

    /// Every migration this build knows has been applied (a reader cannot apply them).
    async fn check_schema_current(&self) -> Result<()> {
        let applied: Vec<i64> = sqlx::query("select version from _sqlx_migrations")
            .fetch_all(&self.pool)
            .await
            .map(|rows| {
                rows.iter()
                    .map(|row| row.get::<i64, _>("version"))
                    .collect()
            })
            .unwrap_or_default();
        let missing = MIGRATOR
            .iter()
            .filter(|m| m.migration_type.is_up_migration())
            .any(|m| !applied.contains(&m.version));
        if missing {
            return Err(StoreError::Open {
                path: self.path.clone(),
                message: "its schema is older than this tracer's and a read-only reader cannot \
                          update it; run `tracer ls` on it once (that migrates it)"
                    .into(),
            });
        }
        Ok(())
    }

    /// Hops whose request or response body contains `text`, newest first, at most `limit`:
    /// letters match in any case (non-ASCII ones too), and a JSON body matches by what its
    /// strings spell, `\u` escapes decoded. A hop whose id is not text is skipped and counted.
    pub async fn hops_with_body_text(&self, text: &str, limit: i64) -> Result<Vec<BodyMatch>> {
        let needle = super::body_search::Needle::new(text);
        let limit = usize::try_from(limit).unwrap_or(0);
        // A body stored in pieces or chunks is searched whole (`body_chunks::whole_body_sql`).
        let mut rows =
            sqlx::query(super::body_chunks::hops_with_whole_bodies_sql()).fetch(&self.pool);
        let mut found = Vec::new();
        while found.len() < limit
            && let Some(row) = rows.try_next().await?
        {
            let bytes = |column: &str| {
                row.try_get::<Vec<u8>, _>(column)
                    .or_else(|_| row.try_get::<String, _>(column).map(String::into_bytes))
                    .unwrap_or_default()
            };
            let in_request = needle.found_in(&bytes("request_bytes"));
            let in_response = needle.found_in(&bytes("response_bytes"));
            if !(in_request || in_response) {
                continue;
            }
            let (Ok(hop_id), Ok(trace_id)) = (
                row.try_get::<String, _>("id"),
                row.try_get::<Option<String>, _>("trace_id"),
            ) else {
                self.skip_unreadable();
                continue;
            };
            found.push(BodyMatch {
                hop_id,
                trace_id,
                in_request,
                in_response,
            });
        }
        Ok(found)
    }
}
