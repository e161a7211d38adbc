//! Opening a tracer database for reading only (`tracer mcp` never writes).

use std::path::Path;

use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

use super::{BUSY_TIMEOUT, MIGRATOR, Result, Store, StoreError, describe_sqlx};

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
}
