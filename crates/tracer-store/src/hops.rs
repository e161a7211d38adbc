//! SQL for the `hops` table: writing a hop's start and end, and reading hops back.

use sqlx::SqliteConnection;

use super::body_chunks::{split_inline, store_tail};
use super::body_pieces::{stored_hop, stored_hops};
pub use super::hop_columns::StoredHop;
use super::hop_columns::{EndColumns, HopRow, len_i64};
use super::hop_insert::{NewHopRow, insert_new_hops};
use super::{Result, Store, StoreError};
use tracer_wire::hop::{BodySide, HopEnd, HopStart, RequestDone, ServerLogLine};

/// Inserts a hop as in flight. A second start for the same id is ignored.
pub async fn insert_start(conn: &mut SqliteConnection, start: &HopStart) -> Result<()> {
    let hop = NewHopRow {
        start,
        request: None,
        end: None,
    };
    insert_new_hops(conn, std::slice::from_ref(&hop)).await?;
    Ok(())
}

/// Completes a hop. Returns false when no started hop has that id (its start was lost).
/// An end that knows nothing of the request (no request end time and no request bytes: the
/// request never finished) keeps the request body already stored rather than wiping it.
pub async fn apply_end(conn: &mut SqliteConnection, end: &HopEnd) -> Result<bool> {
    let bodies = (
        end.request_body.bytes.clone(),
        end.response_body.bytes.clone(),
    );
    apply_end_with_bodies(conn, end, bodies).await
}

/// `apply_end` with the body bytes handed over (the writer moves them, never copies them);
/// the end's own body bytes are not read.
pub(crate) async fn apply_end_with_bodies(
    conn: &mut SqliteConnection,
    end: &HopEnd,
    (request_bytes, response_bytes): (Vec<u8>, Vec<u8>),
) -> Result<bool> {
    let columns = EndColumns::of(end);
    let (request_column, request_chunks) = split_inline(request_bytes);
    let (response_column, response_chunks) = split_inline(response_bytes);
    let done = sqlx::query(
        "update hops set state = ?2, status = ?3, error = ?4, response_headers = ?5,
             request_body = case when ?19 then ?6 else request_body end,
             request_body_len = case when ?19 then ?7 else request_body_len end,
             request_body_truncated = case when ?19 then ?8 else request_body_truncated end,
             response_body = ?9, response_body_len = ?10, response_body_truncated = ?11,
             request_ended_unix_ns = coalesce(?12, request_ended_unix_ns),
             response_head_unix_ns = ?13,
             response_first_byte_unix_ns = ?14, response_ended_unix_ns = ?15,
             response_chunks = ?16, response_chunks_truncated = ?17, response_trailers = ?18,
             note = ?20,
             body_chunked = body_chunked & (case when ?19 then 0 else 1 end)
         where id = ?1",
    )
    .bind(&end.id)
    .bind(columns.state)
    .bind(columns.status)
    .bind(columns.error)
    .bind(columns.response_headers)
    .bind(request_column)
    .bind(columns.request_body_len)
    .bind(columns.request_body_truncated)
    .bind(response_column)
    .bind(columns.response_body_len)
    .bind(columns.response_body_truncated)
    .bind(columns.request_ended_unix_ns)
    .bind(columns.response_head_unix_ns)
    .bind(columns.response_first_byte_unix_ns)
    .bind(columns.response_ended_unix_ns)
    .bind(columns.response_chunks)
    .bind(columns.response_chunks_truncated)
    .bind(columns.response_trailers)
    .bind(columns.carries_request)
    .bind(columns.note)
    .execute(&mut *conn)
    .await?;
    let stored = done.rows_affected() > 0;
    if stored {
        if let Some(bytes) = request_chunks.filter(|_| columns.carries_request) {
            store_tail(conn, &end.id, BodySide::Request, &bytes).await?;
        }
        if let Some(bytes) = response_chunks {
            store_tail(conn, &end.id, BodySide::Response, &bytes).await?;
        }
    }
    Ok(stored)
}

/// Stores a hop's request body while its response is still awaited.
pub async fn apply_request_done(conn: &mut SqliteConnection, done: &RequestDone) -> Result<()> {
    apply_request_done_with_body(conn, done, done.request_body.bytes.clone()).await
}

/// `apply_request_done` with the body bytes handed over (not read from `done`).
pub(crate) async fn apply_request_done_with_body(
    conn: &mut SqliteConnection,
    done: &RequestDone,
    bytes: Vec<u8>,
) -> Result<()> {
    let (column, chunks) = split_inline(bytes);
    let stored = sqlx::query(
        "update hops set request_body = ?2, request_body_len = ?3, request_body_truncated = ?4,
             request_ended_unix_ns = ?5, body_chunked = body_chunked & 2
         where id = ?1 and state = 'in_flight'",
    )
    .bind(&done.id)
    .bind(column)
    .bind(len_i64(done.request_body.total_len))
    .bind(done.request_body.truncated)
    .bind(done.request_ended_unix_ns)
    .execute(&mut *conn)
    .await?;
    if stored.rows_affected() > 0
        && let Some(bytes) = chunks
    {
        store_tail(conn, &done.id, BodySide::Request, &bytes).await?;
    }
    Ok(())
}

/// Marks in-flight rows whose end was lost as aborted with `reason`; returns the ids that have
/// no row yet (their start is still queued).
pub(crate) async fn mark_ends_lost(
    conn: &mut SqliteConnection,
    ids: &[String],
    reason: &str,
) -> Result<Vec<String>> {
    let mut waiting = Vec::new();
    for id in ids {
        let done = sqlx::query(
            "update hops set state = 'aborted', error = ?2 where id = ?1 and state = 'in_flight'",
        )
        .bind(id)
        .bind(reason)
        .execute(&mut *conn)
        .await?;
        if done.rows_affected() == 0 {
            let exists: Option<i64> = sqlx::query_scalar("select 1 from hops where id = ?1")
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
            if exists.is_none() {
                waiting.push(id.clone());
            }
        }
    }
    Ok(waiting)
}

/// Keeps one stderr line of a wrapped server (once: a journal taken in again adds nothing).
pub(crate) async fn insert_server_log(
    conn: &mut SqliteConnection,
    line: &ServerLogLine,
) -> Result<()> {
    sqlx::query(
        "insert into server_logs (route, logged_unix_ns, line)
         select ?1, ?2, ?3 where not exists (select 1 from server_logs
             where route = ?1 and logged_unix_ns = ?2 and line = ?3)",
    )
    .bind(&line.route)
    .bind(line.logged_unix_ns)
    .bind(&line.line)
    .execute(conn)
    .await?;
    Ok(())
}

/// A hop in a listing: no bodies or headers.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct HopListing {
    pub id: String,
    pub trace_id: Option<String>,
    pub route: String,
    pub role: String,
    pub transport: String,
    pub method: String,
    pub path: String,
    pub state: String,
    pub status: Option<i64>,
    pub error: Option<String>,
    pub request_started_unix_ns: i64,
    pub response_ended_unix_ns: Option<i64>,
    pub request_body_len: Option<i64>,
    pub response_body_len: Option<i64>,
}

impl Store {
    /// The most recent hops, newest first (a row that cannot be read is skipped and counted).
    pub async fn recent_hops(&self, limit: i64) -> Result<Vec<HopListing>> {
        let rows = sqlx::query(
            "select id, trace_id, route, role, transport, method, path, state, status, error,
                 request_started_unix_ns, response_ended_unix_ns, request_body_len, response_body_len
             from hops order by seq desc limit ?1",
        )
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().filter_map(|row| self.readable(row)).collect())
    }

    /// The hops one `tracer run` recorded (its proxy's and its wrapped servers'), newest first.
    pub async fn run_hops(&self, run_id: &str) -> Result<Vec<HopListing>> {
        let rows = sqlx::query(
            "select id, trace_id, route, role, transport, method, path, state, status, error,
                 request_started_unix_ns, response_ended_unix_ns, request_body_len, response_body_len
             from hops where run_id = ?1 order by seq desc",
        )
        .bind(run_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().filter_map(|row| self.readable(row)).collect())
    }

    /// One hop by its whole id (by the key's index: for readers that fetch hop after hop).
    pub async fn hop_by_id(&self, id: &str) -> Result<StoredHop> {
        let row = sqlx::query_as::<_, HopRow>("select * from hops where id = ?1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        match row {
            Some(row) => stored_hop(self.pool(), row).await,
            None => Err(StoreError::NotFound(format!("hop {id}"))),
        }
    }

    /// One hop by its whole id with its answer whole and its request body not read back (left
    /// empty): for a reader that shows the answer alone.
    pub async fn hop_answer_by_id(&self, id: &str) -> Result<StoredHop> {
        let row = sqlx::query_as::<_, HopRow>("select * from hops where id = ?1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        match row {
            Some(row) => super::body_pieces::stored_hop_without_request(self.pool(), row).await,
            None => Err(StoreError::NotFound(format!("hop {id}"))),
        }
    }

    /// One hop by its id or an unambiguous prefix of it.
    pub async fn hop(&self, id: &str) -> Result<StoredHop> {
        let rows = sqlx::query_as::<_, HopRow>(
            "select * from hops where substr(id, 1, length(?1)) = ?1 limit 2",
        )
        .bind(id)
        .fetch_all(self.pool())
        .await?;
        match <[HopRow; 1]>::try_from(rows) {
            Ok([row]) => stored_hop(self.pool(), row).await,
            Err(rows) if rows.is_empty() => Err(StoreError::NotFound(format!("hop {id}"))),
            Err(_) => Err(StoreError::NotFound(format!(
                "a single hop for the ambiguous prefix {id}"
            ))),
        }
    }

    /// Every hop in arrival order (for re-grouping and tests); unreadable rows skipped, counted.
    pub async fn all_hops(&self) -> Result<Vec<StoredHop>> {
        let rows = sqlx::query("select * from hops order by seq")
            .fetch_all(self.pool())
            .await?;
        let rows: Vec<HopRow> = rows.iter().filter_map(|row| self.readable(row)).collect();
        stored_hops(self.pool(), rows).await
    }

    /// A wrapped server's stderr lines, oldest first.
    pub async fn server_logs(&self, route: &str) -> Result<Vec<String>> {
        Ok(
            sqlx::query_scalar("select line from server_logs where route = ?1 order by seq")
                .bind(route)
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// A wrapped server's stderr lines logged from `from_ns` to `to_ns`, with their times.
    pub async fn server_logs_between(
        &self,
        route: &str,
        from_ns: i64,
        to_ns: i64,
    ) -> Result<Vec<(i64, String)>> {
        Ok(sqlx::query_as(
            "select logged_unix_ns, line from server_logs
             where route = ?1 and logged_unix_ns between ?2 and ?3 order by seq",
        )
        .bind(route)
        .bind(from_ns)
        .bind(to_ns)
        .fetch_all(self.pool())
        .await?)
    }

    pub async fn hop_count(&self) -> Result<i64> {
        Ok(sqlx::query_scalar("select count(*) from hops")
            .fetch_one(self.pool())
            .await?)
    }
}
