//! SQL for browsing (the TUI, the web UI): the newest traces first a page at a time, so a big
//! database shows its first screen before the whole list is read; and what changed lately.

use super::traces::TraceRow;
use super::{Result, Store};

impl Store {
    /// The newest `limit` traces, newest first (the first screen of a listing).
    pub async fn recent_traces(&self, limit: i64) -> Result<Vec<TraceRow>> {
        let rows = sqlx::query(
            "select id, title, kind, started_unix_ns, ended_unix_ns, created_by
             from traces order by started_unix_ns desc limit ?1",
        )
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().filter_map(|row| self.readable(row)).collect())
    }

    /// At most `limit` traces after the newest `offset`, newest first: one page of a listing.
    pub async fn traces_page(&self, offset: i64, limit: i64) -> Result<Vec<TraceRow>> {
        let rows = sqlx::query(
            "select id, title, kind, started_unix_ns, ended_unix_ns, created_by
             from traces order by started_unix_ns desc, id limit ?1 offset ?2",
        )
        .bind(limit)
        .bind(offset)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().filter_map(|row| self.readable(row)).collect())
    }

    /// How many traces are stored.
    pub async fn trace_count(&self) -> Result<i64> {
        Ok(sqlx::query_scalar("select count(*) from traces")
            .fetch_one(self.pool())
            .await?)
    }

    /// The `seq` of the newest hop stored, 0 when there is none.
    pub async fn newest_seq(&self) -> Result<i64> {
        let newest: Option<i64> = sqlx::query_scalar("select max(seq) from hops")
            .fetch_one(self.pool())
            .await?;
        Ok(newest.unwrap_or(0))
    }

    /// The hops stored after `seq` (at most `limit`), and the hops `ids` names however old, as
    /// marks in arrival order: what a watcher needs to tell that a hop came, ended or moved
    /// to another trace, without reading a body.
    pub async fn hop_marks(&self, seq: i64, ids: &[String], limit: i64) -> Result<Vec<HopMark>> {
        // Two lookups, each by its index (the row id, the unique id): an `or` of the two
        // would read the whole table.
        let mut marks: Vec<HopMark> = sqlx::query_as(
            "select seq, id, trace_id, state from hops where seq > ?1 order by seq limit ?2",
        )
        .bind(seq)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        if !ids.is_empty() {
            let ids = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
            let watched: Vec<HopMark> = sqlx::query_as(
                "select seq, id, trace_id, state from hops
                 where id in (select value from json_each(?1)) and seq <= ?2",
            )
            .bind(ids)
            .bind(seq)
            .fetch_all(self.pool())
            .await?;
            marks.extend(watched);
            marks.sort_by_key(|mark| mark.seq);
        }
        Ok(marks)
    }
}

/// Where a hop stands, as a watcher follows it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HopMark {
    /// Its place in arrival order.
    pub seq: i64,
    pub id: String,
    /// Its trace, once grouping gave it one.
    pub trace_id: Option<String>,
    /// `in_flight`, `complete`, `failed`, ...
    pub state: String,
}
