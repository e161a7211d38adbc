//! Big bodies stored in pieces: writing a piece (as chunks, `body_chunks.rs`), and the one way
//! hops are read back, with each kept body made whole again (its pieces in order, then the
//! row's own bytes or chunked tail), through `whole_body`.

use sqlx::{SqliteConnection, SqlitePool};

use super::Result;
use super::body_chunks::side_bit;
use super::hop_columns::{HopRow, StoredHop};
use super::whole_body::{BodyParts, whole_body};
use tracer_wire::hop::{BodyPiece, BodySide};

/// Stores one piece of a hop's body (as chunks) and marks the hop as having pieces on that side.
/// A piece already stored (a journal taken in again) is left as it is; a piece of a hop with no
/// row (its start was lost) is dropped with it.
pub(crate) async fn insert_piece(conn: &mut SqliteConnection, piece: &BodyPiece) -> Result<()> {
    let row: Option<i64> = sqlx::query_scalar("select 1 from hops where id = ?1")
        .bind(&piece.id)
        .fetch_optional(&mut *conn)
        .await?;
    if row.is_none() {
        return Ok(());
    }
    let stored =
        super::body_chunks::store_piece(conn, &piece.id, piece.side, piece.seq, &piece.bytes)
            .await?;
    if stored {
        sqlx::query("update hops set body_pieces = body_pieces | ?2 where id = ?1")
            .bind(&piece.id)
            .bind(side_bit(piece.side))
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Rows of `hops` as hops, each body whole: every loader of hops ends here.
pub(crate) async fn stored_hops(pool: &SqlitePool, rows: Vec<HopRow>) -> Result<Vec<StoredHop>> {
    let mut hops = Vec::with_capacity(rows.len());
    for row in rows {
        hops.push(stored_hop(pool, row).await?);
    }
    Ok(hops)
}

/// One row as a hop, its bodies whole.
pub(crate) async fn stored_hop(pool: &SqlitePool, mut row: HopRow) -> Result<StoredHop> {
    if row.body_pieces | row.body_chunked != 0 {
        let mut conn = pool.acquire().await?;
        for side in [BodySide::Request, BodySide::Response] {
            let (own, len_hint) = match side {
                BodySide::Request => (&mut row.request_body, row.request_body_len),
                BodySide::Response => (&mut row.response_body, row.response_body_len),
            };
            let parts = BodyParts {
                hop_id: &row.id,
                side,
                body_pieces: row.body_pieces,
                body_chunked: row.body_chunked,
                own: own.take(),
                len_hint,
            };
            let whole = whole_body(&mut conn, parts).await?;
            match side {
                BodySide::Request => row.request_body = Some(whole),
                BodySide::Response => row.response_body = Some(whole),
            }
        }
    }
    let websocket = row.websocket.take();
    let mut hop: StoredHop = row.try_into()?;
    super::ws_frames::attach(pool, &mut hop, websocket).await?;
    Ok(hop)
}

/// One row as a hop, its response body whole and its request body left empty (not read back):
/// for a reader that has what it needs of the request already.
pub(crate) async fn stored_hop_without_request(
    pool: &SqlitePool,
    mut row: HopRow,
) -> Result<StoredHop> {
    row.request_body = Some(Vec::new());
    row.body_pieces &= !side_bit(BodySide::Request);
    row.body_chunked &= !side_bit(BodySide::Request);
    stored_hop(pool, row).await
}

/// One row as grouping reads it. A body still arriving, or cut at `--max-body`, cannot be read
/// as JSON anyway, so its pieces are not read back (a 1 GiB transfer in flight costs grouping
/// nothing, pass after pass); it is left empty. Grouping reads the hop again once it has ended.
pub(crate) async fn stored_hop_for_grouping(
    pool: &SqlitePool,
    mut row: HopRow,
) -> Result<StoredHop> {
    let in_flight = row.state == "in_flight";
    let request_arriving = row.request_ended_unix_ns.is_none();
    for side in [BodySide::Request, BodySide::Response] {
        let (body, truncated, arriving) = match side {
            BodySide::Request => (
                &mut row.request_body,
                row.request_body_truncated,
                request_arriving,
            ),
            BodySide::Response => (
                &mut row.response_body,
                row.response_body_truncated,
                in_flight,
            ),
        };
        if (truncated == Some(true) || arriving) && row.body_pieces & side_bit(side) != 0 {
            *body = Some(Vec::new());
            row.body_pieces &= !side_bit(side);
            row.body_chunked &= !side_bit(side);
        }
    }
    stored_hop(pool, row).await
}
