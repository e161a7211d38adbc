//! Bodies stored as content-defined chunks (`body_chunks`, `hop_body_chunks`): each chunk once,
//! keyed by its SHA-256, and each body part (a piece, or the bytes after the last piece) as its
//! ordered list of chunk ids; and the one SQL expression that puts a whole body back together.
//!
//! A conversation re-sends its history on every turn, so consecutive bodies share almost all
//! their chunks: what a hop repeats costs a row of ids, not the bytes again.

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

#[cfg(test)]
#[path = "body_chunks_tests.rs"]
mod tests;
