//! The requests a running proxy reads as they are recorded: large model requests whose reading
//! is not kept yet (`hop_readings`), found by their columns in recording order.

use std::sync::LazyLock;

use super::hop_readings::{BUILD, KEY_SQL};
use super::{Result, Store};

/// A hop whose request may need reading, as its columns say.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UnreadRequest {
    pub seq: i64,
    pub id: String,
    /// Its request and response have ended (a reading is kept only then: the key holds the
    /// state).
    pub settled: bool,
    /// A reading that matches the hop as stored now is kept.
    pub kept: bool,
}

/// The columns of one hop as an [`UnreadRequest`], for a row of `hops` named `h` (the build is
/// `?9`).
const COLUMNS_SQL: &str = "h.seq, h.id,
     (h.state <> 'in_flight' and h.request_ended_unix_ns is not null) as settled,
     exists(select 1 from hop_readings r where r.hop_id = h.id and r.hop_key = KEY) as kept";

/// Which hops can be model requests worth keeping: large bodies, not a user's request to an
/// agent, not a WebSocket (its messages are read from its frames).
const WHICH_SQL: &str = "coalesce(h.request_body_len, 0) >= ?2 and h.role <> 'agent'
     and h.websocket is null";

impl Store {
    /// Up to `limit` hops recorded after `after_seq`, in recording order, whose request body
    /// is at least `min_len` bytes (see `WHICH_SQL`).
    pub async fn requests_after(
        &self,
        after_seq: i64,
        min_len: i64,
        limit: i64,
    ) -> Result<Vec<UnreadRequest>> {
        static SQL: LazyLock<String> = LazyLock::new(|| {
            format!(
                "select {} from hops h where h.seq > ?1 and {WHICH_SQL} order by h.seq limit ?3",
                COLUMNS_SQL.replace("KEY", &KEY_SQL.replace("?9", "?4"))
            )
        });
        Ok(sqlx::query_as(SQL.as_str())
            .bind(after_seq)
            .bind(min_len)
            .bind(limit)
            .bind(BUILD)
            .fetch_all(self.pool())
            .await?)
    }

    /// The hops of these `seqs` (those still in flight when last seen), as they are now.
    pub async fn requests_again(&self, seqs: &[i64]) -> Result<Vec<UnreadRequest>> {
        static SQL: LazyLock<String> = LazyLock::new(|| {
            format!(
                "select {} from hops h where h.seq in (select value from json_each(?1))
                 order by h.seq",
                COLUMNS_SQL.replace("KEY", &KEY_SQL.replace("?9", "?2"))
            )
        });
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        let list = serde_json::to_string(seqs).unwrap_or_else(|_| "[]".to_string());
        Ok(sqlx::query_as(SQL.as_str())
            .bind(list)
            .bind(BUILD)
            .fetch_all(self.pool())
            .await?)
    }
}
