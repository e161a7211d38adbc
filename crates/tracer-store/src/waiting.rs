//! SQL that `rerun` and `eval` poll while they wait for the proxy to record a new trace.

use super::{Result, Store};

impl Store {
    /// Whether a trace with exactly this id is stored yet.
    pub async fn has_trace(&self, id: &str) -> Result<bool> {
        let count: i64 = sqlx::query_scalar("select count(*) from traces where id = ?1")
            .bind(id)
            .fetch_one(self.pool())
            .await?;
        Ok(count > 0)
    }
}
