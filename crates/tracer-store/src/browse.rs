//! SQL for browsing (the TUI): the newest traces first, so a big database shows its first screen
//! before the whole list is read.

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
}
