//! SQL for the `sessions` table and traces' `session_id`: one run of a host above its traces.

use std::collections::HashMap;

use super::traces::TraceRow;
use super::{Result, Store, StoreError};

/// A session row, as grouping writes it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct SessionRow {
    pub id: String,
    /// The host's own id of its run, once a hop carried one.
    pub host_session_id: Option<String>,
    pub started_unix_ns: i64,
    pub created_by: String,
}

/// What the store says of a stored trace when grouping meets its hops again: its kind and its
/// session (none for traces grouped before sessions existed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TracePlace {
    pub kind: String,
    pub session_id: Option<String>,
    pub host_session_id: Option<String>,
}

/// One grouping pass's writes: traces, the session of each, sessions, and hops' traces.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupingWrite<'a> {
    pub traces: &'a [TraceRow],
    /// (trace id, session id)
    pub trace_sessions: &'a [(String, String)],
    pub sessions: &'a [SessionRow],
    /// (hop id, trace id)
    pub assignments: &'a [(String, String)],
}

/// Puts a trace in a session inside the caller's transaction (for imports): the session row is
/// written if it is not there yet.
pub async fn join_session(
    conn: &mut sqlx::SqliteConnection,
    trace_id: &str,
    session: &SessionRow,
) -> Result<()> {
    sqlx::query(
        "insert into sessions (id, host_session_id, started_unix_ns, created_by)
         values (?1, ?2, ?3, ?4) on conflict(id) do nothing",
    )
    .bind(&session.id)
    .bind(&session.host_session_id)
    .bind(session.started_unix_ns)
    .bind(&session.created_by)
    .execute(&mut *conn)
    .await?;
    sqlx::query("update traces set session_id = ?2 where id = ?1")
        .bind(trace_id)
        .bind(&session.id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

impl Store {
    /// Every stored trace's kind and session, by trace id.
    pub async fn trace_places(&self) -> Result<HashMap<String, TracePlace>> {
        let rows: Vec<(String, String, Option<String>, Option<String>)> = sqlx::query_as(
            "select t.id, t.kind, t.session_id, s.host_session_id
             from traces t left join sessions s on s.id = t.session_id",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, kind, session_id, host_session_id)| {
                let place = TracePlace {
                    kind,
                    session_id,
                    host_session_id,
                };
                (id, place)
            })
            .collect())
    }

    /// Every stored session, newest first.
    pub async fn sessions(&self) -> Result<Vec<SessionRow>> {
        let rows = sqlx::query(
            "select id, host_session_id, started_unix_ns, created_by
             from sessions order by started_unix_ns desc",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().filter_map(|row| self.readable(row)).collect())
    }

    /// The session of every trace that has one, by trace id.
    pub async fn trace_sessions(&self) -> Result<HashMap<String, String>> {
        let rows: Vec<(String, String)> =
            sqlx::query_as("select id, session_id from traces where session_id is not null")
                .fetch_all(self.pool())
                .await?;
        Ok(rows.into_iter().collect())
    }

    /// The session of one trace, with the host's id, if it has one.
    pub async fn session_of_trace(&self, trace_id: &str) -> Result<Option<SessionRow>> {
        let row = sqlx::query(
            "select s.id, s.host_session_id, s.started_unix_ns, s.created_by
             from traces t join sessions s on s.id = t.session_id where t.id = ?1",
        )
        .bind(trace_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.and_then(|row| self.readable(&row)))
    }

    /// Writes traces (keeping a title already stored) and hops' trace ids in one transaction.
    pub async fn write_grouping(
        &self,
        traces: &[TraceRow],
        assignments: &[(String, String)],
    ) -> Result<()> {
        self.write_grouping_pass(GroupingWrite {
            traces,
            assignments,
            ..Default::default()
        })
        .await
    }

    /// Writes a grouping pass in one transaction: traces (keeping a title already stored),
    /// sessions (keeping a host id already stored), each trace's session, hops' trace ids.
    pub async fn write_grouping_pass(&self, write: GroupingWrite<'_>) -> Result<()> {
        let mut tx = self.begin_write().await?;
        for session in write.sessions {
            sqlx::query(
                "insert into sessions (id, host_session_id, started_unix_ns, created_by)
                 values (?1, ?2, ?3, ?4)
                 on conflict(id) do update set
                     host_session_id = coalesce(sessions.host_session_id, excluded.host_session_id),
                     started_unix_ns = min(sessions.started_unix_ns, excluded.started_unix_ns)",
            )
            .bind(&session.id)
            .bind(&session.host_session_id)
            .bind(session.started_unix_ns)
            .bind(&session.created_by)
            .execute(&mut *tx)
            .await?;
        }
        super::traces::upsert_traces(&mut tx, write.traces).await?;
        for chunk in write.trace_sessions.chunks(1000) {
            let pairs = serde_json::to_string(chunk)
                .map_err(|e| StoreError::Malformed(format!("trace sessions: {e}")))?;
            sqlx::query(
                "update traces set session_id = pair.value ->> 1
                 from json_each(?1) as pair
                 where traces.id = pair.value ->> 0",
            )
            .bind(pairs)
            .execute(&mut *tx)
            .await?;
        }
        super::traces::assign_hops(&mut tx, write.assignments).await?;
        tx.commit().await?;
        Ok(())
    }
}
