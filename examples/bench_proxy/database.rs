//! Reading the tracer child's database from the bench: read-only while it runs, counted after.

use std::path::Path;

use sqlx::Row;

use crate::report::{Backlog, HopCheck};

/// A read-only connection to a database another process is writing.
pub async fn open_read_only(db: &Path) -> anyhow::Result<sqlx::SqliteConnection> {
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .read_only(true);
    Ok(sqlx::ConnectOptions::connect(&options).await?)
}

/// Rows written so far, and those not yet in a trace (live grouping's backlog).
pub async fn backlog_on(conn: &mut sqlx::SqliteConnection) -> anyhow::Result<Backlog> {
    let row = sqlx::query(
        "select count(*) as rows, count(*) filter (where trace_id is null) as ungrouped from hops",
    )
    .fetch_one(conn)
    .await?;
    Ok(Backlog {
        rows: row.try_get("rows")?,
        ungrouped: row.try_get("ungrouped")?,
    })
}

/// The running child's backlog, on a connection opened for the one reading.
pub async fn backlog(db: &Path) -> anyhow::Result<Backlog> {
    let mut conn = open_read_only(db).await?;
    backlog_on(&mut conn).await
}

/// Reads the tracer child's database after its clean stop: rows by state, and the
/// `hops_not_written` counter.
pub async fn count_hops(db: &Path, sent: u64, child_said: String) -> anyhow::Result<HopCheck> {
    let store = tracer_store::Store::open(db).await?;
    let mut check = HopCheck {
        sent,
        child_said,
        ..HopCheck::default()
    };
    for row in sqlx::query("select state, count(*) as n from hops group by state")
        .fetch_all(store.pool())
        .await?
    {
        let state: String = row.try_get("state")?;
        let n: i64 = row.try_get("n")?;
        check.rows += n;
        if state == tracer_wire::hop::HopState::Complete.as_str() {
            check.complete += n;
        }
    }
    check.not_written_counter = store.counter(tracer_store::HOPS_NOT_WRITTEN).await?;
    store.close().await;
    Ok(check)
}
