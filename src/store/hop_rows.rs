//! Writing many new hops at once: one multi-row insert for the hops that started in a batch,
//! each with whatever of its request and end the same batch already carried.

use std::collections::HashSet;

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::Result;
use super::hops::headers_to_json;
use crate::hop::{BodyCapture, HopEnd, HopStart, HopState, RequestDone};

/// A hop first seen in this batch.
pub struct NewHop<'a> {
    pub start: &'a HopStart,
    pub request: Option<&'a RequestDone>,
    pub end: Option<&'a HopEnd>,
}

/// Rows per statement: 27 values each, under SQLite's 32766-variable limit.
const ROWS_PER_STATEMENT: usize = 500;

/// Inserts new hops; a hop id already stored is left as it is. Returns the ids inserted.
pub async fn insert_new_hops(
    conn: &mut SqliteConnection,
    hops: &[NewHop<'_>],
) -> Result<HashSet<String>> {
    let mut inserted = HashSet::with_capacity(hops.len());
    for rows in hops.chunks(ROWS_PER_STATEMENT) {
        let mut insert: QueryBuilder<Sqlite> = QueryBuilder::new(
            "insert into hops (id, route, role, transport, peer, method, path, url, state, status,
                 error, request_headers, response_headers, request_body, request_body_len,
                 request_body_truncated, response_body, response_body_len, response_body_truncated,
                 request_started_unix_ns, request_ended_unix_ns, response_head_unix_ns,
                 response_first_byte_unix_ns, response_ended_unix_ns, response_chunks,
                 response_chunks_truncated, response_trailers) ",
        );
        insert.push_values(rows, |mut row, hop| {
            let start = hop.start;
            let end = hop.end;
            // An end that saw the request whole carries it; otherwise the request event does.
            let end_request =
                end.filter(|e| e.request_ended_unix_ns.is_some() || e.request_body.total_len > 0);
            let request_body = end_request
                .map(|e| &e.request_body)
                .or(hop.request.map(|r| &r.request_body))
                .or(end.map(|e| &e.request_body));
            let request_ended = end
                .and_then(|e| e.request_ended_unix_ns)
                .or(hop.request.map(|r| r.request_ended_unix_ns));
            let state = end.map_or(HopState::InFlight, |e| {
                e.state.unwrap_or(HopState::Complete)
            });
            row.push_bind(start.id.clone())
                .push_bind(start.route.clone())
                .push_bind(start.role.as_str())
                .push_bind(start.transport.as_str())
                .push_bind(start.peer.clone())
                .push_bind(start.method.clone())
                .push_bind(start.path.clone())
                .push_bind(start.url.clone())
                .push_bind(state.as_str())
                .push_bind(end.and_then(|e| e.status).map(i64::from))
                .push_bind(end.and_then(|e| e.error.clone()))
                .push_bind(headers_to_json(&start.request_headers))
                .push_bind(end.map(|e| headers_to_json(&e.response_headers)))
                .push_bind(request_body.map(|b| b.bytes.clone()))
                .push_bind(request_body.map(body_len))
                .push_bind(request_body.map(|b| b.truncated))
                .push_bind(end.map(|e| e.response_body.bytes.clone()))
                .push_bind(end.map(|e| body_len(&e.response_body)))
                .push_bind(end.map(|e| e.response_body.truncated))
                .push_bind(start.started_unix_ns)
                .push_bind(request_ended)
                .push_bind(end.and_then(|e| e.response_head_unix_ns))
                .push_bind(end.and_then(|e| e.response_first_byte_unix_ns))
                .push_bind(end.and_then(|e| e.response_ended_unix_ns))
                .push_bind(end.map(chunks_json))
                .push_bind(end.map(|e| e.chunks_truncated))
                .push_bind(end.and_then(trailers_json));
        });
        insert.push(" on conflict(id) do nothing returning id");
        let ids: Vec<String> = insert.build_query_scalar().fetch_all(&mut *conn).await?;
        inserted.extend(ids);
    }
    Ok(inserted)
}

/// Response trailers as stored: null when the response had none.
pub fn trailers_json(end: &HopEnd) -> Option<String> {
    (!end.response_trailers.is_empty()).then(|| headers_to_json(&end.response_trailers))
}

fn body_len(body: &BodyCapture) -> i64 {
    i64::try_from(body.total_len).unwrap_or(i64::MAX)
}

/// Response chunk timing as stored: a JSON array of `[offset_ns, size]`.
pub fn chunks_json(end: &HopEnd) -> String {
    let pairs: Vec<[i64; 2]> = end
        .chunks
        .iter()
        .map(|c| [c.offset_ns, i64::try_from(c.size).unwrap_or(i64::MAX)])
        .collect();
    serde_json::to_string(&pairs).unwrap_or_else(|_| "[]".into())
}
