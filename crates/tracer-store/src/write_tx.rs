//! Write transactions that cannot outlive a failure.
//!
//! sqlx counts transaction depth itself. When SQLite rolls a transaction back on its own (a
//! failed COMMIT with an I/O error or a full disk does), sqlx's `ROLLBACK` fails, its count stays
//! at 1, and every later `begin()` on that connection issues a `SAVEPOINT`: SQLite opens a real
//! transaction for it that `RELEASE` never commits and `ROLLBACK TO` never ends. The connection
//! then reports commits that are not in the database and holds the write lock until it closes.
//!
//! So tracer never uses sqlx's transactions for writes: it sends `BEGIN IMMEDIATE` and `COMMIT`
//! itself, and a connection whose transaction failed in any way is closed, never reused.

use std::ops::{Deref, DerefMut};

use sqlx::pool::PoolConnection;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Sqlite, SqliteConnection};

use super::{Result, Store};

/// A write transaction on a pooled connection: committed, or the connection is closed.
pub struct PooledWrite {
    conn: PoolConnection<Sqlite>,
    committed: bool,
}

impl Store {
    /// Starts a write transaction (`BEGIN IMMEDIATE`: the write lock is taken now or never).
    pub async fn begin_write(&self) -> Result<PooledWrite> {
        let conn = self.pool().acquire().await?;
        let mut write = PooledWrite {
            conn,
            committed: false,
        };
        sqlx::query("begin immediate")
            .execute(&mut *write.conn)
            .await?;
        Ok(write)
    }
}

impl PooledWrite {
    pub async fn commit(mut self) -> Result<()> {
        sqlx::query("commit").execute(&mut *self.conn).await?;
        self.committed = true;
        Ok(())
    }
}

impl Deref for PooledWrite {
    type Target = SqliteConnection;
    fn deref(&self) -> &SqliteConnection {
        &self.conn
    }
}

impl DerefMut for PooledWrite {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.conn
    }
}

impl Drop for PooledWrite {
    fn drop(&mut self) {
        if !self.committed {
            // Closing the connection ends whatever SQLite still holds (transaction, write lock).
            self.conn.close_on_drop();
        }
    }
}

/// The store writer's own connection, opened when needed and closed after any failure.
pub(crate) struct WriterConn {
    options: SqliteConnectOptions,
    conn: Option<SqliteConnection>,
}

impl WriterConn {
    pub(crate) fn new(store: &Store, busy_timeout: std::time::Duration) -> WriterConn {
        let options = (*store.pool().connect_options())
            .clone()
            .busy_timeout(busy_timeout)
            .disable_statement_logging();
        WriterConn {
            options,
            conn: None,
        }
    }

    /// Runs `BEGIN IMMEDIATE` on the connection (opening it first if needed).
    pub(crate) async fn begin(&mut self) -> Result<&mut SqliteConnection> {
        if self.conn.is_none() {
            self.conn = Some(SqliteConnection::connect_with(&self.options).await?);
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(super::StoreError::Malformed("no writer connection".into()));
        };
        if let Err(error) = sqlx::query("begin immediate").execute(&mut *conn).await {
            self.discard().await;
            return Err(error.into());
        }
        match self.conn.as_mut() {
            Some(conn) => Ok(conn),
            None => Err(super::StoreError::Malformed("no writer connection".into())),
        }
    }

    /// Commits the transaction `begin` started.
    pub(crate) async fn commit(&mut self) -> Result<()> {
        let result = match self.conn.as_mut() {
            Some(conn) => sqlx::query("commit").execute(conn).await.map(|_| ()),
            None => Err(sqlx::Error::PoolClosed),
        };
        if result.is_err() {
            self.discard().await;
        }
        Ok(result?)
    }

    /// Closes the connection: whatever SQLite still held for it ends with it.
    pub(crate) async fn discard(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), conn.close()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `chattr +i`/`-i` (root on a file system that supports it); false when it cannot be done.
    fn immutable(path: &std::path::Path, on: bool) -> bool {
        std::process::Command::new("chattr")
            .arg(if on { "+i" } else { "-i" })
            .arg(path)
            .output()
            .is_ok_and(|out| out.status.success())
    }

    #[tokio::test]
    async fn a_failed_commit_leaves_no_transaction_and_no_lock_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = Store::open(&path).await.unwrap();
        let wal = dir.path().join("t.db-wal");
        if !immutable(&path, true) || !immutable(&wal, true) {
            immutable(&path, false);
            eprintln!("skipped: chattr +i is not available here (needs root and ext4-like fs)");
            return;
        }
        for _ in 0..3 {
            let failed = async {
                let mut tx = store.begin_write().await?;
                store_counter(&mut tx).await?;
                tx.commit().await
            }
            .await;
            assert!(failed.is_err(), "an immutable database takes no commit");
        }
        assert!(immutable(&path, false) && immutable(&wal, false));
        let mut tx = store.begin_write().await.unwrap();
        store_counter(&mut tx).await.unwrap();
        tx.commit().await.unwrap();
        // Another connection sees the commit and can take the write lock at once.
        let mut other =
            <SqliteConnection as Connection>::connect(&format!("sqlite://{}", path.display()))
                .await
                .unwrap();
        let value: i64 = sqlx::query_scalar("select value from counters where name = 'x'")
            .fetch_one(&mut other)
            .await
            .unwrap();
        assert_eq!(value, 1);
        sqlx::query("pragma busy_timeout = 0")
            .execute(&mut other)
            .await
            .unwrap();
        sqlx::query("begin immediate")
            .execute(&mut other)
            .await
            .unwrap();
    }

    /// SQLite opens a file it cannot write read-only for the connection's life: connections the
    /// pool opens while the file is immutable must not be kept to fail writes afterwards.
    #[tokio::test]
    async fn connections_opened_while_the_file_is_unwritable_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = Store::open(&path).await.unwrap();
        if !immutable(&path, true) {
            eprintln!("skipped: chattr +i is not available here (needs root and ext4-like fs)");
            return;
        }
        // Every connection the pool can have, opened (or refused) while the file is immutable; a
        // refused one is retried until the acquire timeout, which this does not wait out.
        let mut held = Vec::new();
        for _ in 0..4 {
            let acquire = store.pool().acquire();
            if let Ok(Ok(conn)) =
                tokio::time::timeout(std::time::Duration::from_secs(1), acquire).await
            {
                held.push(conn);
            }
        }
        drop(held);
        assert!(immutable(&path, false));
        let mut held = Vec::new();
        for _ in 0..4 {
            let mut conn = store.pool().acquire().await.unwrap();
            store_counter(&mut conn).await.unwrap();
            held.push(conn);
        }
    }

    async fn store_counter(conn: &mut SqliteConnection) -> Result<()> {
        sqlx::query(
            "insert into counters (name, value) values ('x', 1)
             on conflict(name) do update set value = value + 1",
        )
        .execute(conn)
        .await?;
        Ok(())
    }
}
