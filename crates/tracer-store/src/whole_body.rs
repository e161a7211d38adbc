//! A stored body made whole again, in Rust, a stored chunk at a time: its pieces in order, then
//! its chunked parts in order, then the row's own bytes. SQLite's `group_concat` and `||` did this
//! in the statement before, and held four to seven copies of a long body at once while doing it
//! (a 14 MiB answer raised the proxy's peak by about 100 MiB); here the body is held once, in a
//! buffer sized for it up front, and each chunk only while it is copied in.

use futures_util::TryStreamExt;
use sqlx::{Row, SqliteConnection};

use super::Result;
use super::body_chunks::{TAIL_PART, side_bit};
use tracer_wire::hop::BodySide;

/// What the hop's row says of one side's body.
pub(crate) struct BodyParts<'a> {
    pub hop_id: &'a str,
    pub side: BodySide,
    /// Bits of the row (`side_bit`): the side has pieces, has a chunked tail.
    pub body_pieces: i64,
    pub body_chunked: i64,
    /// The row's own bytes of that side (the column), which come last.
    pub own: Option<Vec<u8>>,
    /// The body's length as the row counts it: room reserved (untouched room is not resident).
    pub len_hint: Option<i64>,
}

/// The side's whole body.
pub(crate) async fn whole_body(
    conn: &mut SqliteConnection,
    parts: BodyParts<'_>,
) -> Result<Vec<u8>> {
    let bit = side_bit(parts.side);
    let pieces = parts.body_pieces & bit != 0;
    let chunked = parts.body_chunked & bit != 0;
    let own = parts.own.unwrap_or_default();
    if !pieces && !chunked {
        return Ok(own);
    }
    let room = parts
        .len_hint
        .and_then(|len| usize::try_from(len).ok())
        .unwrap_or(0)
        .clamp(own.len(), MAX_RESERVED);
    let mut body = Vec::with_capacity(room);
    if pieces {
        let mut rows = sqlx::query(
            "select bytes from hop_body_pieces where hop_id = ?1 and side = ?2 order by seq",
        )
        .bind(parts.hop_id)
        .bind(parts.side.code())
        .fetch(&mut *conn);
        while let Some(row) = rows.try_next().await? {
            body.extend_from_slice(row.try_get::<&[u8], _>(0)?);
        }
    }
    let mut rows = sqlx::query(
        "select c.bytes from hop_body_chunks r join body_chunks c on c.id = r.chunk_id
          where r.hop_id = ?1 and r.side = ?2
            and ((?3 and r.part < ?5) or (?4 and r.part = ?5))
          order by r.part, r.seq",
    )
    .bind(parts.hop_id)
    .bind(parts.side.code())
    .bind(pieces)
    .bind(chunked)
    .bind(TAIL_PART)
    .fetch(&mut *conn);
    while let Some(row) = rows.try_next().await? {
        body.extend_from_slice(row.try_get::<&[u8], _>(0)?);
    }
    drop(rows);
    body.extend_from_slice(&own);
    Ok(body)
}

/// Room reserved up front at most (a longer body grows as it is read).
const MAX_RESERVED: usize = 256 << 20;

/// One hop's whole bodies of the sides in `sides` (bits as `side_bit`; the other is empty), read
/// from its row: what a reader that has only the hop's id uses.
pub(crate) async fn whole_bodies_of_hop(
    conn: &mut SqliteConnection,
    hop_id: &str,
    sides: i64,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let Some(row) = sqlx::query(
        "select body_pieces, body_chunked, request_body, response_body, request_body_len,
                response_body_len
           from hops where id = ?1",
    )
    .bind(hop_id)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(Default::default());
    };
    let (pieces, chunked): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
    let whole = |side: BodySide, own: &str, len: &str| -> Result<Option<BodyParts<'_>>> {
        if sides & side_bit(side) == 0 {
            return Ok(None);
        }
        Ok(Some(BodyParts {
            hop_id,
            side,
            body_pieces: pieces,
            body_chunked: chunked,
            own: row.try_get(own)?,
            len_hint: row.try_get(len)?,
        }))
    };
    let request = whole(BodySide::Request, "request_body", "request_body_len")?;
    let response = whole(BodySide::Response, "response_body", "response_body_len")?;
    let request = match request {
        Some(parts) => whole_body(conn, parts).await?,
        None => Vec::new(),
    };
    let response = match response {
        Some(parts) => whole_body(conn, parts).await?,
        None => Vec::new(),
    };
    Ok((request, response))
}
