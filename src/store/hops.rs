//! SQL for the `hops` table: writing a hop's start and end, and reading hops back.

use base64::Engine;
use serde_json::{Value, json};
use sqlx::SqliteConnection;

use super::{Result, Store, StoreError};
use crate::hop::{
    BodyCapture, Chunk, Header, HopEnd, HopStart, HopState, RequestDone, Role, ServerLogLine,
    Transport,
};

/// Headers as stored: a JSON array of `{"name", "value"}`, or `{"name", "value_base64"}` when the
/// value is not UTF-8, in wire order.
pub fn headers_to_json(headers: &[Header]) -> String {
    let items: Vec<Value> = headers
        .iter()
        .map(|h| match h.text() {
            Some(text) => json!({"name": h.name, "value": text}),
            None => json!({
                "name": h.name,
                "value_base64": base64::engine::general_purpose::STANDARD.encode(&h.value),
            }),
        })
        .collect();
    Value::Array(items).to_string()
}

pub fn headers_from_json(text: &str) -> Result<Vec<Header>> {
    let bad = |why: &str| StoreError::Malformed(format!("headers column: {why}"));
    let items: Vec<Value> = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
    items
        .iter()
        .map(|item| {
            let name = item["name"].as_str().ok_or_else(|| bad("missing name"))?;
            let value = match (item["value"].as_str(), item["value_base64"].as_str()) {
                (Some(text), _) => text.as_bytes().to_vec(),
                (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| bad(&e.to_string()))?,
                (None, None) => return Err(bad("missing value")),
            };
            Ok(Header::new(name, value))
        })
        .collect()
}

/// Inserts a hop as in flight. A second start for the same id is ignored.
pub async fn insert_start(conn: &mut SqliteConnection, start: &HopStart) -> Result<()> {
    sqlx::query(
        "insert into hops (id, route, role, transport, peer, method, path, url, state,
             request_headers, request_started_unix_ns)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'in_flight', ?9, ?10)
         on conflict(id) do nothing",
    )
    .bind(&start.id)
    .bind(&start.route)
    .bind(start.role.as_str())
    .bind(start.transport.as_str())
    .bind(&start.peer)
    .bind(&start.method)
    .bind(&start.path)
    .bind(&start.url)
    .bind(headers_to_json(&start.request_headers))
    .bind(start.started_unix_ns)
    .execute(conn)
    .await?;
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
pub async fn apply_end_with_bodies(
    conn: &mut SqliteConnection,
    end: &HopEnd,
    (request_bytes, response_bytes): (Vec<u8>, Vec<u8>),
) -> Result<bool> {
    let state = end.state.unwrap_or(HopState::Complete);
    let done = sqlx::query(
        "update hops set state = ?2, status = ?3, error = ?4, response_headers = ?5,
             request_body = case when ?12 is null and ?7 = 0 then request_body else ?6 end,
             request_body_len = case when ?12 is null and ?7 = 0 then request_body_len else ?7 end,
             request_body_truncated =
                 case when ?12 is null and ?7 = 0 then request_body_truncated else ?8 end,
             response_body = ?9, response_body_len = ?10, response_body_truncated = ?11,
             request_ended_unix_ns = coalesce(?12, request_ended_unix_ns),
             response_head_unix_ns = ?13,
             response_first_byte_unix_ns = ?14, response_ended_unix_ns = ?15,
             response_chunks = ?16, response_chunks_truncated = ?17, response_trailers = ?18
         where id = ?1",
    )
    .bind(&end.id)
    .bind(state.as_str())
    .bind(end.status.map(i64::from))
    .bind(&end.error)
    .bind(headers_to_json(&end.response_headers))
    .bind(request_bytes)
    .bind(len_i64(end.request_body.total_len))
    .bind(end.request_body.truncated)
    .bind(response_bytes)
    .bind(len_i64(end.response_body.total_len))
    .bind(end.response_body.truncated)
    .bind(end.request_ended_unix_ns)
    .bind(end.response_head_unix_ns)
    .bind(end.response_first_byte_unix_ns)
    .bind(end.response_ended_unix_ns)
    .bind(super::hop_rows::chunks_json(end))
    .bind(end.chunks_truncated)
    .bind(super::hop_rows::trailers_json(end))
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Stores a hop's request body while its response is still awaited.
pub async fn apply_request_done(conn: &mut SqliteConnection, done: &RequestDone) -> Result<()> {
    apply_request_done_with_body(conn, done, done.request_body.bytes.clone()).await
}

/// `apply_request_done` with the body bytes handed over (not read from `done`).
pub async fn apply_request_done_with_body(
    conn: &mut SqliteConnection,
    done: &RequestDone,
    bytes: Vec<u8>,
) -> Result<()> {
    sqlx::query(
        "update hops set request_body = ?2, request_body_len = ?3, request_body_truncated = ?4,
             request_ended_unix_ns = ?5
         where id = ?1 and state = 'in_flight'",
    )
    .bind(&done.id)
    .bind(bytes)
    .bind(len_i64(done.request_body.total_len))
    .bind(done.request_body.truncated)
    .bind(done.request_ended_unix_ns)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks in-flight rows whose end was lost as aborted with `reason`; returns the ids that have
/// no row yet (their start is still queued).
pub async fn mark_ends_lost(
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
pub async fn insert_server_log(conn: &mut SqliteConnection, line: &ServerLogLine) -> Result<()> {
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

fn len_i64(len: u64) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

/// One row of `hops`, as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HopRow {
    pub seq: i64,
    pub id: String,
    pub trace_id: Option<String>,
    pub route: String,
    pub role: String,
    pub transport: String,
    pub peer: String,
    pub method: String,
    pub path: String,
    pub url: String,
    pub state: String,
    pub status: Option<i64>,
    pub error: Option<String>,
    pub request_headers: String,
    pub response_headers: Option<String>,
    pub request_body: Option<Vec<u8>>,
    pub request_body_len: Option<i64>,
    pub request_body_truncated: Option<bool>,
    pub response_body: Option<Vec<u8>>,
    pub response_body_len: Option<i64>,
    pub response_body_truncated: Option<bool>,
    pub request_started_unix_ns: i64,
    pub request_ended_unix_ns: Option<i64>,
    pub response_head_unix_ns: Option<i64>,
    pub response_first_byte_unix_ns: Option<i64>,
    pub response_ended_unix_ns: Option<i64>,
    pub response_chunks: Option<String>,
    pub response_chunks_truncated: Option<bool>,
    pub response_trailers: Option<String>,
}

/// A hop read back: the start, the end (when it ended), and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredHop {
    pub seq: i64,
    pub trace_id: Option<String>,
    pub state: HopState,
    pub start: HopStart,
    pub end: HopEnd,
}

impl TryFrom<HopRow> for StoredHop {
    type Error = StoreError;

    fn try_from(row: HopRow) -> Result<Self> {
        let malformed = StoreError::Malformed;
        let state: HopState = row.state.parse().map_err(malformed)?;
        let chunks: Vec<[i64; 2]> = match &row.response_chunks {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| StoreError::Malformed(format!("response_chunks: {e}")))?,
            None => Vec::new(),
        };
        let body = |bytes: Option<Vec<u8>>, len: Option<i64>, truncated: Option<bool>| {
            let bytes = bytes.unwrap_or_default();
            BodyCapture {
                total_len: len.map_or(bytes.len() as u64, |l| u64::try_from(l).unwrap_or(0)),
                bytes,
                truncated: truncated.unwrap_or(false),
            }
        };
        let start = HopStart {
            id: row.id.clone(),
            route: row.route,
            role: row.role.parse::<Role>().map_err(malformed)?,
            transport: row.transport.parse::<Transport>().map_err(malformed)?,
            peer: row.peer,
            method: row.method,
            path: row.path,
            url: row.url,
            request_headers: headers_from_json(&row.request_headers)?,
            started_unix_ns: row.request_started_unix_ns,
        };
        let end = HopEnd {
            id: row.id,
            state: Some(state),
            status: row.status.and_then(|s| u16::try_from(s).ok()),
            response_headers: match &row.response_headers {
                Some(text) => headers_from_json(text)?,
                None => Vec::new(),
            },
            response_trailers: match &row.response_trailers {
                Some(text) => headers_from_json(text)?,
                None => Vec::new(),
            },
            request_body: body(
                row.request_body,
                row.request_body_len,
                row.request_body_truncated,
            ),
            response_body: body(
                row.response_body,
                row.response_body_len,
                row.response_body_truncated,
            ),
            request_ended_unix_ns: row.request_ended_unix_ns,
            response_head_unix_ns: row.response_head_unix_ns,
            response_first_byte_unix_ns: row.response_first_byte_unix_ns,
            response_ended_unix_ns: row.response_ended_unix_ns,
            chunks: chunks
                .into_iter()
                .map(|[offset_ns, size]| Chunk {
                    offset_ns,
                    size: u64::try_from(size).unwrap_or(0),
                })
                .collect(),
            chunks_truncated: row.response_chunks_truncated.unwrap_or(false),
            error: row.error,
        };
        Ok(StoredHop {
            seq: row.seq,
            trace_id: row.trace_id,
            state,
            start,
            end,
        })
    }
}

/// A hop in a listing: no bodies or headers.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct HopSummary {
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
    /// The most recent hops, newest first.
    pub async fn recent_hops(&self, limit: i64) -> Result<Vec<HopSummary>> {
        Ok(sqlx::query_as::<_, HopSummary>(
            "select id, trace_id, route, role, transport, method, path, state, status, error,
                 request_started_unix_ns, response_ended_unix_ns, request_body_len, response_body_len
             from hops order by seq desc limit ?1",
        )
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
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
            Ok([row]) => row.try_into(),
            Err(rows) if rows.is_empty() => Err(StoreError::NotFound(format!("hop {id}"))),
            Err(_) => Err(StoreError::NotFound(format!(
                "a single hop for the ambiguous prefix {id}"
            ))),
        }
    }

    /// Every hop in arrival order (for re-grouping and tests).
    pub async fn all_hops(&self) -> Result<Vec<StoredHop>> {
        sqlx::query_as::<_, HopRow>("select * from hops order by seq")
            .fetch_all(self.pool())
            .await?
            .into_iter()
            .map(StoredHop::try_from)
            .collect()
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

    pub async fn hop_count(&self) -> Result<i64> {
        Ok(sqlx::query_scalar("select count(*) from hops")
            .fetch_one(self.pool())
            .await?)
    }
}
