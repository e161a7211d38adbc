//! SQL for the `traces` table and for hops' `trace_id`: writing a grouping, reading it back.

use futures_util::TryStreamExt;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use super::hop_columns::{HopRow, StoredHop};
use super::{Result, Store, StoreError};

/// A trace row, as the grouping (or an import) writes it and as it is read back (`kind` is
/// `request` or `setup`; `created_by` says which wrote it).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct TraceRow {
    pub id: String,
    pub title: Option<String>,
    pub kind: String,
    pub started_unix_ns: i64,
    pub ended_unix_ns: Option<i64>,
    pub created_by: String,
}

/// A page of stored hops, in arrival order.
#[derive(Debug)]
pub struct HopPage {
    /// The rows that could be read (one that cannot is skipped and counted).
    pub hops: Vec<HopRow>,
    /// The `seq` of the page's last row, read or not: where the next page starts.
    pub last_seq: Option<i64>,
    /// The page holds as many rows as were asked for: more may follow.
    pub full: bool,
}

impl Store {
    /// When the earliest hop without a trace started, if any hop has none.
    pub async fn earliest_unassigned_start(&self) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(
            "select min(request_started_unix_ns) from hops where trace_id is null",
        )
        .fetch_one(self.pool())
        .await?)
    }

    /// When the latest hop started, if there is one.
    pub async fn latest_start(&self) -> Result<Option<i64>> {
        Ok(
            sqlx::query_scalar("select max(request_started_unix_ns) from hops")
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// The `seq` of the last hop stored, 0 when there is none.
    pub async fn last_seq(&self, conn: &mut SqliteConnection) -> Result<i64> {
        let last: Option<i64> = sqlx::query_scalar("select max(seq) from hops")
            .fetch_one(conn)
            .await?;
        Ok(last.unwrap_or(0))
    }

    /// At most `limit` hops stored after `seq` and up to `upto`, in arrival order, as stored
    /// (turn each into a hop with `grouping_hop`): a page of what a live grouper has not seen.
    /// The page is read whole before it is parsed, so SQLite's worker hands it over without
    /// waiting on the reader. A pass reads its pages on one connection (`conn`): each of the
    /// pool's connections keeps a page cache of its own.
    pub async fn hops_after_seq(
        &self,
        conn: &mut SqliteConnection,
        seq: i64,
        upto: i64,
        limit: usize,
    ) -> Result<HopPage> {
        let rows =
            sqlx::query("select * from hops where seq > ?1 and seq <= ?2 order by seq limit ?3")
                .bind(seq)
                .bind(upto)
                .bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .fetch_all(conn)
                .await?;
        Ok(HopPage {
            full: rows.len() >= limit,
            last_seq: rows.last().and_then(|row| row.try_get("seq").ok()),
            hops: rows.iter().filter_map(|row| self.readable(row)).collect(),
        })
    }

    /// The hops `seqs` names, as stored, in arrival order: what a live grouper saw unfinished
    /// or still holds, read again.
    pub async fn hops_with_seqs(
        &self,
        conn: &mut SqliteConnection,
        seqs: &[i64],
    ) -> Result<Vec<HopRow>> {
        let seqs = serde_json::to_string(seqs).unwrap_or_else(|_| "[]".into());
        let rows = sqlx::query(
            "select * from hops where seq in (select value from json_each(?1)) order by seq",
        )
        .bind(seqs)
        .fetch_all(conn)
        .await?;
        Ok(rows.iter().filter_map(|row| self.readable(row)).collect())
    }

    /// A stored row as grouping reads it (its long bodies read back whole where grouping needs
    /// them), or None (counted) when it cannot be read.
    pub async fn grouping_hop(&self, row: HopRow) -> Result<Option<StoredHop>> {
        match super::body_pieces::stored_hop_for_grouping(self.pool(), row).await {
            Ok(hop) => Ok(Some(hop)),
            Err(StoreError::Malformed(_)) => {
                self.skip_unreadable();
                Ok(None)
            }
            Err(other) => Err(other),
        }
    }

    /// A row as grouping reads it, or None (counted) when it cannot be read.
    async fn readable_for_grouping(&self, row: SqliteRow) -> Result<Option<StoredHop>> {
        match self.readable::<HopRow>(&row) {
            Some(row) => self.grouping_hop(row).await,
            None => Ok(None),
        }
    }

    /// The hops grouping needs to place new ones: those started at or after `since_ns`, and every
    /// hop of a trace not yet ended; in start order, one at a time, so a caller that keeps a
    /// little of each (grouping keeps its trace input) never holds the whole window's bodies.
    pub fn hops_for_grouping(
        &self,
        since_ns: i64,
    ) -> impl futures_util::Stream<Item = Result<StoredHop>> + '_ {
        sqlx::query(
            "select * from hops
             where request_started_unix_ns >= ?1
                or trace_id in (select id from traces where ended_unix_ns is null)
             order by request_started_unix_ns, seq",
        )
        .bind(since_ns)
        .fetch(self.pool())
        .map_err(StoreError::from)
        .try_filter_map(move |row| self.readable_for_grouping(row))
    }

    /// Every stored trace, newest first; a row that cannot be read is skipped and counted.
    pub async fn traces(&self) -> Result<Vec<TraceRow>> {
        let rows = sqlx::query(
            "select id, title, kind, started_unix_ns, ended_unix_ns, created_by
             from traces order by started_unix_ns desc",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().filter_map(|row| self.readable(row)).collect())
    }

    /// A row decoded, or None (counted) when one of its columns does not hold what it should.
    pub(super) fn readable<T>(&self, row: &SqliteRow) -> Option<T>
    where
        T: for<'r> sqlx::FromRow<'r, SqliteRow>,
    {
        let decoded = T::from_row(row).ok();
        if decoded.is_none() {
            self.skip_unreadable();
        }
        decoded
    }

    /// One trace by its id or an unambiguous prefix of it: the one lookup `show`, `replay`,
    /// `export` and the TUI share, so they word a mistake alike.
    pub async fn trace(&self, id_or_prefix: &str) -> Result<TraceRow> {
        let id = id_or_prefix.trim();
        if id.is_empty() {
            return Err(StoreError::UnknownTrace(format!("`{id_or_prefix}`")));
        }
        let rows = sqlx::query_as::<_, TraceRow>(
            "select id, title, kind, started_unix_ns, ended_unix_ns, created_by
             from traces where substr(id, 1, length(?1)) = ?1 limit 2",
        )
        .bind(id)
        .fetch_all(self.pool())
        .await?;
        match <[TraceRow; 1]>::try_from(rows) {
            Ok([row]) => Ok(row),
            Err(rows) if rows.is_empty() => Err(StoreError::UnknownTrace(id.to_string())),
            Err(_) => Err(StoreError::AmbiguousTrace(id.to_string())),
        }
    }

    /// The hops of one trace, in start order; a row that cannot be read is skipped and counted.
    pub async fn trace_hops(&self, trace_id: &str) -> Result<Vec<StoredHop>> {
        let rows = sqlx::query(
            "select * from hops where trace_id = ?1 order by request_started_unix_ns, seq",
        )
        .bind(trace_id)
        .fetch_all(self.pool())
        .await?;
        let mut hops = Vec::with_capacity(rows.len());
        for row in rows.iter().filter_map(|row| self.readable::<HopRow>(row)) {
            match super::body_pieces::stored_hop(self.pool(), row).await {
                Ok(hop) => hops.push(hop),
                Err(StoreError::Malformed(_)) => self.skip_unreadable(),
                Err(other) => return Err(other),
            }
        }
        Ok(hops)
    }

    /// The hops of one trace, in start order, each handed to `each` as soon as its bodies are
    /// read, so a caller that keeps less than the whole hop holds one body at a time; a row
    /// that cannot be read is skipped and counted. A hop for which `skip_request(id, role)` holds
    /// comes with its request body empty, not read back (its length still the stored one).
    pub async fn each_trace_hop_skipping(
        &self,
        trace_id: &str,
        skip_request: impl Fn(&str, &str) -> bool,
        mut each: impl FnMut(StoredHop),
    ) -> Result<()> {
        let rows = sqlx::query(
            "select * from hops where trace_id = ?1 order by request_started_unix_ns, seq",
        )
        .bind(trace_id)
        .fetch_all(self.pool())
        .await?;
        let rows: Vec<HopRow> = rows.iter().filter_map(|row| self.readable(row)).collect();
        for row in rows {
            let hop = match skip_request(&row.id, &row.role) {
                true => super::body_pieces::stored_hop_without_request(self.pool(), row).await,
                false => super::body_pieces::stored_hop(self.pool(), row).await,
            };
            match hop {
                Ok(hop) => each(hop),
                Err(StoreError::Malformed(_)) => self.skip_unreadable(),
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// Forgets every hop's trace and every trace `created_by` wrote (for a full re-grouping).
    pub async fn clear_grouping(&self, created_by: &str) -> Result<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "update hops set trace_id = null
             where trace_id in (select id from traces where created_by = ?1)",
        )
        .bind(created_by)
        .execute(&mut *tx)
        .await?;
        sqlx::query("delete from traces where created_by = ?1")
            .bind(created_by)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "update traces set session_id = null
             where session_id in (select id from sessions where created_by = ?1)",
        )
        .bind(created_by)
        .execute(&mut *tx)
        .await?;
        sqlx::query("delete from sessions where created_by = ?1")
            .bind(created_by)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// Inserts or updates traces inside the caller's transaction (keeping a title already stored).
pub(super) async fn upsert_traces(conn: &mut SqliteConnection, traces: &[TraceRow]) -> Result<()> {
    for trace in traces {
        sqlx::query(
            "insert into traces (id, title, kind, started_unix_ns, ended_unix_ns, created_by)
             values (?1, ?2, ?3, ?4, ?5, ?6)
             on conflict(id) do update set
                 title = coalesce(traces.title, excluded.title),
                 kind = excluded.kind,
                 started_unix_ns = min(traces.started_unix_ns, excluded.started_unix_ns),
                 ended_unix_ns = excluded.ended_unix_ns",
        )
        .bind(&trace.id)
        .bind(&trace.title)
        .bind(&trace.kind)
        .bind(trace.started_unix_ns)
        .bind(trace.ended_unix_ns)
        .bind(&trace.created_by)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Sets hops' trace ids inside the caller's transaction: (hop id, trace id) pairs.
pub(super) async fn assign_hops(
    conn: &mut SqliteConnection,
    assignments: &[(String, String)],
) -> Result<()> {
    // One statement per thousand assignments, not one per hop: each statement is a round
    // trip to SQLite's worker thread.
    for chunk in assignments.chunks(1000) {
        let pairs = serde_json::to_string(chunk)
            .map_err(|e| StoreError::Malformed(format!("assignments: {e}")))?;
        sqlx::query(
            "update hops set trace_id = pair.value ->> 1
             from json_each(?1) as pair
             where hops.id = pair.value ->> 0",
        )
        .bind(pairs)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Inserts a trace inside the caller's transaction (for imports); false when that id is taken.
pub async fn insert_trace(conn: &mut SqliteConnection, trace: &TraceRow) -> Result<bool> {
    let done = sqlx::query(
        "insert into traces (id, title, kind, started_unix_ns, ended_unix_ns, created_by)
         values (?1, ?2, ?3, ?4, ?5, ?6)
         on conflict(id) do nothing",
    )
    .bind(&trace.id)
    .bind(&trace.title)
    .bind(&trace.kind)
    .bind(trace.started_unix_ns)
    .bind(trace.ended_unix_ns)
    .bind(&trace.created_by)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Whether a hop with this id is stored (inside the caller's transaction).
pub async fn hop_exists(conn: &mut SqliteConnection, hop_id: &str) -> Result<bool> {
    let count: i64 = sqlx::query_scalar("select count(*) from hops where id = ?1")
        .bind(hop_id)
        .fetch_one(conn)
        .await?;
    Ok(count > 0)
}

/// Puts one hop in a trace inside the caller's transaction.
pub async fn set_hop_trace(
    conn: &mut SqliteConnection,
    hop_id: &str,
    trace_id: &str,
) -> Result<()> {
    sqlx::query("update hops set trace_id = ?2 where id = ?1")
        .bind(hop_id)
        .bind(trace_id)
        .execute(conn)
        .await?;
    Ok(())
}
