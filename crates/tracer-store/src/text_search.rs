//! The rows `tracer search` reads, streamed (never every body at once): each hop's head with its
//! inline bodies, each stored chunk once (`body_chunks`), and which chunks each chunked body is
//! made of, in order. The matching itself (decoding, case, JSON escapes) is tracer-live's (`search.rs`).

use std::sync::LazyLock;

use futures_util::stream::{BoxStream, StreamExt, TryStreamExt};
use sqlx::Row;

use super::body_chunks::TAIL_PART;
use super::hop_columns::headers_from_json;
use super::{Result, Store};
use tracer_wire::hop::{BodySide, Header};

/// How one side's body is kept, as far as a search needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeptBody {
    /// All of it in the row (small bodies, and every body written before chunks).
    Inline(Vec<u8>),
    /// Chunk rows (`Store::chunk_lists`), then these bytes of the row.
    Chunked { tail: Vec<u8> },
    /// Old pieces (`hop_body_pieces`): read it whole (`Store::whole_bodies`).
    Pieces,
}

/// A hop as a search reads it: no chunked bytes, only what the row holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchedHop {
    pub id: String,
    pub trace_id: Option<String>,
    pub request_headers: Vec<Header>,
    pub response_headers: Vec<Header>,
    pub request: KeptBody,
    pub response: KeptBody,
    /// A WebSocket hop: its messages are rows of `ws_frames` (read with `Store::hop`).
    pub websocket: bool,
}

impl SearchedHop {
    pub fn body(&self, side: BodySide) -> &KeptBody {
        match side {
            BodySide::Request => &self.request,
            BodySide::Response => &self.response,
        }
    }

    pub fn headers(&self, side: BodySide) -> &[Header] {
        match side {
            BodySide::Request => &self.request_headers,
            BodySide::Response => &self.response_headers,
        }
    }
}

/// The chunks of one chunked body, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkList {
    pub hop_id: String,
    pub side: BodySide,
    pub chunk_ids: Vec<i64>,
}

const HOPS_SQL: &str = "select h.id, h.trace_id, h.request_headers, h.response_headers,
       h.body_pieces, h.body_chunked, h.request_body, h.response_body,
       h.websocket is not null as websocket,
       exists (select 1 from hop_body_pieces p where p.hop_id = h.id and p.side = 0) as old_request,
       exists (select 1 from hop_body_pieces p where p.hop_id = h.id and p.side = 1) as old_response
     from hops h order by h.request_started_unix_ns desc, h.seq desc";

impl Store {
    /// Every hop, newest first, one row at a time.
    pub fn searched_hops(&self) -> BoxStream<'_, Result<Option<SearchedHop>>> {
        sqlx::query(HOPS_SQL)
            .fetch(&self.pool)
            .map_err(Into::into)
            .map_ok(|row| {
                let hop = searched_hop(&row);
                if hop.is_none() {
                    self.skip_unreadable();
                }
                hop
            })
            .boxed()
    }

    /// Every stored chunk once, one at a time: its id and bytes.
    pub fn stored_chunks(&self) -> BoxStream<'_, Result<(i64, Vec<u8>)>> {
        sqlx::query("select id, bytes from body_chunks")
            .fetch(&self.pool)
            .map_err(Into::into)
            .map_ok(|row| {
                let id = row.try_get::<i64, _>("id").unwrap_or(-1);
                (id, row_bytes(&row, "bytes"))
            })
            .boxed()
    }

    /// The chunks of every chunked body, one body at a time, each body's in order: only the
    /// rows its hop's bits say are part of it, as `whole_body` reads them.
    pub fn chunk_lists(&self) -> BoxStream<'_, Result<ChunkList>> {
        static SQL: LazyLock<String> = LazyLock::new(|| {
            format!(
                "select hop_id, side, group_concat(chunk_id) as chunk_ids from (
                   select r.hop_id, r.side, r.chunk_id from hop_body_chunks r
                     join hops h on h.id = r.hop_id
                    where ((h.body_pieces >> r.side) & 1 and r.part < {TAIL_PART})
                       or ((h.body_chunked >> r.side) & 1 and r.part = {TAIL_PART})
                    order by r.hop_id, r.side, r.part, r.seq)
                 group by hop_id, side"
            )
        });
        sqlx::query(SQL.as_str())
            .fetch(&self.pool)
            .map_err(Into::into)
            .map_ok(|row| ChunkList {
                hop_id: row.try_get("hop_id").unwrap_or_default(),
                side: match row.try_get::<i64, _>("side") {
                    Ok(1) => BodySide::Response,
                    _ => BodySide::Request,
                },
                chunk_ids: row
                    .try_get::<String, _>("chunk_ids")
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|id| id.trim().parse().ok())
                    .collect(),
            })
            .boxed()
    }

    /// One hop's whole kept bodies, of the sides asked for (the other is empty).
    pub async fn whole_bodies(
        &self,
        hop_id: &str,
        request: bool,
        response: bool,
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        let sides = i64::from(request) | (i64::from(response) << 1);
        let mut conn = self.pool.acquire().await?;
        super::whole_body::whole_bodies_of_hop(&mut conn, hop_id, sides).await
    }
}

/// A blob column (SQLite's `||` makes text of blobs: both are read as bytes).
fn row_bytes(row: &sqlx::sqlite::SqliteRow, column: &str) -> Vec<u8> {
    row.try_get::<Vec<u8>, _>(column)
        .or_else(|_| row.try_get::<String, _>(column).map(String::into_bytes))
        .unwrap_or_default()
}

fn searched_hop(row: &sqlx::sqlite::SqliteRow) -> Option<SearchedHop> {
    let id: String = row.try_get("id").ok()?;
    let trace_id: Option<String> = row.try_get("trace_id").ok()?;
    let headers = |column: &str| {
        row.try_get::<Option<String>, _>(column)
            .ok()
            .flatten()
            .map_or(Ok(Vec::new()), |text| headers_from_json(&text))
    };
    let (request_headers, response_headers) = (
        headers("request_headers").ok()?,
        headers("response_headers").ok()?,
    );
    let pieces: i64 = row.try_get("body_pieces").unwrap_or(0);
    let chunked: i64 = row.try_get("body_chunked").unwrap_or(0);
    let kept = |side: BodySide, column: &str, old: &str| {
        let bit = 1 << side.code();
        if row.try_get::<bool, _>(old).unwrap_or(false) {
            KeptBody::Pieces
        } else if (pieces | chunked) & bit != 0 {
            let tail = if chunked & bit != 0 {
                Vec::new()
            } else {
                row_bytes(row, column)
            };
            KeptBody::Chunked { tail }
        } else {
            KeptBody::Inline(row_bytes(row, column))
        }
    };
    Some(SearchedHop {
        request: kept(BodySide::Request, "request_body", "old_request"),
        response: kept(BodySide::Response, "response_body", "old_response"),
        websocket: row.try_get::<bool, _>("websocket").unwrap_or(false),
        id,
        trace_id,
        request_headers,
        response_headers,
    })
}
