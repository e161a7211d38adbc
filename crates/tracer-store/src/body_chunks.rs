//! Bodies stored as content-defined chunks (`body_chunks`, `hop_body_chunks`): each chunk once,
//! keyed by its SHA-256, and each body part (a piece, or the bytes after the last piece) as its
//! ordered list of chunk ids; and the one SQL expression that puts a whole body back together.
//!
//! A conversation re-sends its history on every turn, so consecutive bodies share almost all
//! their chunks: what a hop repeats costs a row of ids, not the bytes again.

use std::sync::LazyLock;

use sqlx::SqliteConnection;

use super::Result;
use super::chunking::chunks;
use tracer_wire::hop::BodySide;

/// Bodies (and body tails) shorter than this stay inline in the `hops` row.
const INLINE_BELOW: usize = 4 * 1024;

/// `hop_body_chunks.part` of the bytes after a body's last piece (the row's own tail): after
/// every piece number.
pub(crate) const TAIL_PART: i64 = 1 << 32;

/// The bit of `hops.body_chunked` (and of `hops.body_pieces`) for a side.
pub(crate) fn side_bit(side: BodySide) -> i64 {
    1 << side.code()
}

/// Whether a body tail of `len` bytes is stored as chunks (else inline).
pub(crate) fn stored_as_chunks(len: usize) -> bool {
    len >= INLINE_BELOW
}

/// A body tail split for storing: (the bytes for the `hops` column, the bytes to store as chunks
/// with `store_tail` once the row is there). A short body stays whole in the column; a longer
/// one leaves the empty blob there.
pub(crate) fn split_inline(bytes: Vec<u8>) -> (Vec<u8>, Option<Vec<u8>>) {
    if stored_as_chunks(bytes.len()) {
        (Vec::new(), Some(bytes))
    } else {
        (bytes, None)
    }
}

/// The bytes for the `hops` column of a body tail (see `split_inline`), copied only when short.
pub(crate) fn inline_copy(bytes: &[u8]) -> Vec<u8> {
    if stored_as_chunks(bytes.len()) {
        Vec::new()
    } else {
        bytes.to_vec()
    }
}

/// Stores a body tail as chunks and marks the row's side chunked. The row's body column must
/// already hold the empty blob (`inline_part`). Replaces any chunk list that side's tail had.
pub(crate) async fn store_tail(
    conn: &mut SqliteConnection,
    hop_id: &str,
    side: BodySide,
    bytes: &[u8],
) -> Result<()> {
    store_part(conn, hop_id, side, TAIL_PART, bytes).await?;
    sqlx::query("update hops set body_chunked = body_chunked | ?2 where id = ?1")
        .bind(hop_id)
        .bind(side_bit(side))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Stores one piece (`part` = its seq) as chunks, once: a piece already stored, as chunks or as
/// an older `hop_body_pieces` row, is left as it is. Returns whether it was stored now.
pub(crate) async fn store_piece(
    conn: &mut SqliteConnection,
    hop_id: &str,
    side: BodySide,
    seq: u32,
    bytes: &[u8],
) -> Result<bool> {
    let present: Option<i64> = sqlx::query_scalar(
        "select 1 where exists (select 1 from hop_body_chunks
                                where hop_id = ?1 and side = ?2 and part = ?3)
                     or exists (select 1 from hop_body_pieces
                                where hop_id = ?1 and side = ?2 and seq = ?3)",
    )
    .bind(hop_id)
    .bind(i64::from(side.code()))
    .bind(i64::from(seq))
    .fetch_optional(&mut *conn)
    .await?;
    if present.is_some() {
        return Ok(false);
    }
    store_part(conn, hop_id, side, i64::from(seq), bytes).await?;
    Ok(true)
}

/// Writes the chunk list of one part, each chunk stored once.
async fn store_part(
    conn: &mut SqliteConnection,
    hop_id: &str,
    side: BodySide,
    part: i64,
    bytes: &[u8],
) -> Result<()> {
    let side = i64::from(side.code());
    sqlx::query("delete from hop_body_chunks where hop_id = ?1 and side = ?2 and part = ?3")
        .bind(hop_id)
        .bind(side)
        .bind(part)
        .execute(&mut *conn)
        .await?;
    for (seq, chunk) in chunks(bytes).enumerate() {
        let chunk_id = chunk_id(conn, chunk).await?;
        sqlx::query(
            "insert into hop_body_chunks (hop_id, side, part, seq, chunk_id)
             values (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(hop_id)
        .bind(side)
        .bind(part)
        .bind(i64::try_from(seq).unwrap_or(i64::MAX))
        .bind(chunk_id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The id of a chunk's row, stored now if no chunk with its SHA-256 is.
async fn chunk_id(conn: &mut SqliteConnection, chunk: &[u8]) -> Result<i64> {
    let digest = ring::digest::digest(&ring::digest::SHA256, chunk);
    let hash = digest.as_ref();
    let known: Option<i64> = sqlx::query_scalar("select id from body_chunks where sha256 = ?1")
        .bind(hash)
        .fetch_optional(&mut *conn)
        .await?;
    if let Some(id) = known {
        return Ok(id);
    }
    Ok(
        sqlx::query_scalar("insert into body_chunks (sha256, bytes) values (?1, ?2) returning id")
            .bind(hash)
            .bind(chunk)
            .fetch_one(&mut *conn)
            .await?,
    )
}

/// A select of one hop's (`?1`) whole bodies (`request_bytes`, `response_bytes`), of the sides
/// in `sides` (bits as `side_bit`; the other side is read as the empty blob, never assembled).
pub(crate) fn whole_bodies_of_hop_sql(sides: i64) -> &'static str {
    static QUERIES: LazyLock<[String; 4]> = LazyLock::new(|| {
        [0, 1, 2, 3].map(|sides: i64| {
            let side = |side: BodySide| {
                if sides & side_bit(side) != 0 {
                    body_sql(side)
                } else {
                    "x''".to_string()
                }
            };
            format!(
                "select {} as request_bytes, {} as response_bytes from hops h where h.id = ?1",
                side(BodySide::Request),
                side(BodySide::Response)
            )
        })
    });
    let at = usize::try_from(sides & 3).unwrap_or(0);
    QUERIES[at].as_str()
}

fn body_sql(side: BodySide) -> String {
    let (code, bit) = (side.code(), side_bit(side));
    let column = match side {
        BodySide::Request => "request_body",
        BodySide::Response => "response_body",
    };
    format!(
        "(coalesce((select group_concat(bytes, '') from (select p.bytes from hop_body_pieces p
              where h.body_pieces & {bit} and p.hop_id = h.id and p.side = {code}
              order by p.seq)), x'')
          || coalesce((select group_concat(bytes, '') from (select c.bytes
              from hop_body_chunks r join body_chunks c on c.id = r.chunk_id
              where r.hop_id = h.id and r.side = {code}
                and ((h.body_pieces & {bit} and r.part < {TAIL_PART}) or
                     (h.body_chunked & {bit} and r.part = {TAIL_PART}))
              order by r.part, r.seq)), x'')
          || coalesce(h.{column}, x''))"
    )
}

#[cfg(test)]
#[path = "body_chunks_tests.rs"]
mod tests;
