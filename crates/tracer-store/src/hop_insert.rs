//! Writing many new hops at once: one multi-row insert for the hops that started in a batch,
//! each with whatever of its request and end the same batch already carried (the columns come
//! from `hop_columns`, the one mapping).

use std::collections::HashSet;

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::Result;
use super::body_chunks::{inline_copy, store_tail, stored_as_chunks};
use super::hop_columns::{EndColumns, body_len, carries_request, headers_to_json};
use tracer_wire::hop::{BodyCapture, BodySide, HopEnd, HopStart, HopState, RequestDone};

/// A hop first seen in this batch: its start, and its request and end when the batch has them.
pub(crate) struct NewHopRow<'a> {
    pub start: &'a HopStart,
    pub request: Option<&'a RequestDone>,
    pub end: Option<&'a HopEnd>,
}

/// The rows a statement inserts: a batch is cut into statements of these sizes (the largest
/// that fits first), so only three statements are ever prepared, and all stay prepared on the
/// writer's connection. A statement for each batch's own row count was prepared anew each time
/// (parsing was about 2% of the proxy's CPU under load), and a kept statement of hundreds of rows
/// holds megabytes of SQLite's program.
const STATEMENT_ROWS: [usize; 3] = [64, 8, 1];

/// `hops` cut into statements of `STATEMENT_ROWS` sizes.
fn statements<T>(mut hops: &[T]) -> Vec<&[T]> {
    let mut out = Vec::new();
    while let Some(&size) = STATEMENT_ROWS.iter().find(|&&size| size <= hops.len()) {
        let (rows, rest) = hops.split_at(size);
        out.push(rows);
        hops = rest;
    }
    out
}

/// Inserts new hops; a hop id already stored is left as it is. Returns the ids inserted.
pub(crate) async fn insert_new_hops(
    conn: &mut SqliteConnection,
    hops: &[NewHopRow<'_>],
) -> Result<HashSet<String>> {
    let mut inserted = HashSet::with_capacity(hops.len());
    for rows in statements(hops) {
        let mut insert: QueryBuilder<Sqlite> = QueryBuilder::new(
            "insert into hops (id, route, role, transport, peer, method, path, url, state, status,
                 error, request_headers, response_headers, request_body, request_body_len,
                 request_body_truncated, response_body, response_body_len, response_body_truncated,
                 request_started_unix_ns, request_ended_unix_ns, response_head_unix_ns,
                 response_first_byte_unix_ns, response_ended_unix_ns, response_chunks,
                 response_chunks_truncated, response_trailers, note, run_id) ",
        );
        insert.push_values(rows, |mut row, hop| {
            let start = hop.start;
            let end = hop.end.map(|e| (e, EndColumns::of(e)));
            let request_body = request_capture(hop);
            let request_ended = end
                .as_ref()
                .and_then(|(_, c)| c.request_ended_unix_ns)
                .or(hop.request.map(|r| r.request_ended_unix_ns));
            let columns = end.as_ref().map(|(_, c)| c);
            row.push_bind(start.id.clone())
                .push_bind(start.route.clone())
                .push_bind(start.role.as_str())
                .push_bind(start.transport.as_str())
                .push_bind(start.peer.clone())
                .push_bind(start.method.clone())
                .push_bind(start.path.clone())
                .push_bind(start.url.clone())
                .push_bind(columns.map_or(HopState::InFlight.as_str(), |c| c.state))
                .push_bind(columns.and_then(|c| c.status))
                .push_bind(columns.and_then(|c| c.error.map(str::to_string)))
                .push_bind(headers_to_json(&start.request_headers))
                .push_bind(columns.map(|c| c.response_headers.clone()))
                .push_bind(request_body.map(|b| inline_copy(&b.bytes)))
                .push_bind(request_body.map(body_len))
                .push_bind(request_body.map(|b| b.truncated))
                .push_bind(hop.end.map(|e| inline_copy(&e.response_body.bytes)))
                .push_bind(columns.map(|c| c.response_body_len))
                .push_bind(columns.map(|c| c.response_body_truncated))
                .push_bind(start.started_unix_ns)
                .push_bind(request_ended)
                .push_bind(columns.and_then(|c| c.response_head_unix_ns))
                .push_bind(columns.and_then(|c| c.response_first_byte_unix_ns))
                .push_bind(columns.and_then(|c| c.response_ended_unix_ns))
                .push_bind(columns.map(|c| c.response_chunks.clone()))
                .push_bind(columns.map(|c| c.response_chunks_truncated))
                .push_bind(columns.and_then(|c| c.response_trailers.clone()))
                .push_bind(columns.and_then(|c| c.note.map(str::to_string)))
                .push_bind(start.run_id.clone());
        });
        insert.push(" on conflict(id) do nothing returning id");
        let ids: Vec<String> = insert.build_query_scalar().fetch_all(&mut *conn).await?;
        inserted.extend(ids);
    }
    // Long bodies as chunks, once their rows are there (rows already stored are left alone).
    for hop in hops.iter().filter(|hop| inserted.contains(&hop.start.id)) {
        let id = &hop.start.id;
        if let Some(body) = request_capture(hop).filter(|b| stored_as_chunks(b.bytes.len())) {
            store_tail(conn, id, BodySide::Request, &body.bytes).await?;
        }
        if let Some(end) = hop
            .end
            .filter(|e| stored_as_chunks(e.response_body.bytes.len()))
        {
            store_tail(conn, id, BodySide::Response, &end.response_body.bytes).await?;
        }
    }
    Ok(inserted)
}

/// The request body a new row stores: an end that saw the request whole carries it; otherwise
/// the request event does.
fn request_capture<'a>(hop: &NewHopRow<'a>) -> Option<&'a BodyCapture> {
    hop.end
        .filter(|e| carries_request(e))
        .map(|e| &e.request_body)
        .or(hop.request.map(|r| &r.request_body))
        .or(hop.end.map(|e| &e.request_body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_cut_into_statements_of_three_sizes() {
        let rows = [(); 147];
        let sizes: Vec<usize> = statements(&rows).iter().map(|rows| rows.len()).collect();
        assert_eq!(sizes, [64, 64, 8, 8, 1, 1, 1]);
        assert!(statements(&rows[..0]).is_empty());
    }
}
