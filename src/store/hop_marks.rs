//! What live grouping reads first of each new hop: its place in the record and its state, not
//! its bodies; the whole row only for a hop whose facts it was not handed (`committed`).

use futures_util::TryStreamExt;
use sqlx::Row;

use super::hop_columns::StoredHop;
use super::{Result, Store, StoreError};
use crate::hop::HopState;

/// One hop's mark: enough to place it in start order and know whether it has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HopMark {
    pub seq: i64,
    pub id: String,
    pub trace_id: Option<String>,
    pub state: HopState,
    pub started_unix_ns: i64,
    pub request_ended_unix_ns: Option<i64>,
}

impl Store {
    /// The marks of hops stored after `seq` and of those in `again`, in start order; a row whose
    /// mark cannot be read is skipped and counted.
    pub async fn hop_marks_after_seq(&self, seq: i64, again: &[i64]) -> Result<Vec<HopMark>> {
        let again = serde_json::to_string(again).unwrap_or_else(|_| "[]".into());
        let mut rows = sqlx::query(
            "select seq, id, trace_id, state, request_started_unix_ns, request_ended_unix_ns
             from hops
             where seq > ?1 or seq in (select value from json_each(?2))
             order by request_started_unix_ns, seq",
        )
        .bind(seq)
        .bind(again)
        .fetch(self.pool());
        let mut marks = Vec::new();
        while let Some(row) = rows.try_next().await.map_err(StoreError::from)? {
            match mark_of(&row) {
                Some(mark) => marks.push(mark),
                None => self.skip_unreadable(),
            }
        }
        Ok(marks)
    }

    /// The hops `seqs` name, whole, as grouping reads them (in no particular order); a row that
    /// cannot be read is skipped and counted.
    pub fn hops_by_seq_for_grouping<'a>(
        &'a self,
        seqs: &[i64],
    ) -> impl futures_util::Stream<Item = Result<StoredHop>> + 'a {
        let seqs = serde_json::to_string(seqs).unwrap_or_else(|_| "[]".into());
        sqlx::query("select * from hops where seq in (select value from json_each(?1))")
            .bind(seqs)
            .fetch(self.pool())
            .map_err(StoreError::from)
            .try_filter_map(move |row| self.readable_for_grouping(row))
    }
}

fn mark_of(row: &sqlx::sqlite::SqliteRow) -> Option<HopMark> {
    let state: String = row.try_get("state").ok()?;
    Some(HopMark {
        seq: row.try_get("seq").ok()?,
        id: row.try_get("id").ok()?,
        trace_id: row.try_get("trace_id").ok()?,
        state: state.parse::<HopState>().ok()?,
        started_unix_ns: row.try_get("request_started_unix_ns").ok()?,
        request_ended_unix_ns: row.try_get("request_ended_unix_ns").ok()?,
    })
}
