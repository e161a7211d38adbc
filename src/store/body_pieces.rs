//! Big bodies stored in pieces (`hop_body_pieces`): writing a piece, and the one way hops are read
//! back, with each kept body made whole again (its pieces in order, then the row's own bytes).

use sqlx::{SqliteConnection, SqlitePool};

use super::Result;
use super::hop_columns::{HopRow, StoredHop};
use crate::hop::{BodyPiece, BodySide};

/// The bit of `hops.body_pieces` that says a side has pieces.
fn side_bit(side: BodySide) -> i64 {
    1 << side.code()
}

/// Stores one piece of a hop's body and marks the hop as having pieces on that side. A piece
/// already stored (a journal taken in again) is left as it is; a piece of a hop with no row (its
/// start was lost) is dropped with it.
pub async fn insert_piece(conn: &mut SqliteConnection, piece: &BodyPiece) -> Result<()> {
    let stored = sqlx::query(
        "insert or ignore into hop_body_pieces (hop_id, side, seq, bytes)
         select ?1, ?2, ?3, ?4 where exists (select 1 from hops where id = ?1)",
    )
    .bind(&piece.id)
    .bind(i64::from(piece.side.code()))
    .bind(i64::from(piece.seq))
    .bind(piece.bytes.as_slice())
    .execute(&mut *conn)
    .await?;
    if stored.rows_affected() > 0 {
        sqlx::query("update hops set body_pieces = body_pieces | ?2 where id = ?1")
            .bind(&piece.id)
            .bind(side_bit(piece.side))
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Rows of `hops` as hops, each body whole: every loader of hops ends here.
pub async fn stored_hops(pool: &SqlitePool, rows: Vec<HopRow>) -> Result<Vec<StoredHop>> {
    let mut hops = Vec::with_capacity(rows.len());
    for row in rows {
        hops.push(stored_hop(pool, row).await?);
    }
    Ok(hops)
}

/// One row as a hop, its bodies whole.
pub async fn stored_hop(pool: &SqlitePool, mut row: HopRow) -> Result<StoredHop> {
    if row.body_pieces != 0 {
        let pieces: Vec<(i64, Vec<u8>)> = sqlx::query_as(
            "select side, bytes from hop_body_pieces
             where hop_id = ?1 and (?2 >> side) & 1 = 1 order by side, seq",
        )
        .bind(&row.id)
        .bind(row.body_pieces)
        .fetch_all(pool)
        .await?;
        if row.body_pieces & side_bit(BodySide::Request) != 0 {
            row.request_body = Some(whole(&pieces, BodySide::Request, row.request_body.take()));
        }
        if row.body_pieces & side_bit(BodySide::Response) != 0 {
            row.response_body = Some(whole(&pieces, BodySide::Response, row.response_body.take()));
        }
    }
    let websocket = row.websocket.take();
    let mut hop: StoredHop = row.try_into()?;
    super::ws_frames::attach(pool, &mut hop, websocket).await?;
    Ok(hop)
}

/// One row as grouping reads it. A body still arriving, or cut at `--max-body`, cannot be read
/// as JSON anyway, so its pieces are not read back (a 1 GiB transfer in flight costs grouping
/// nothing, pass after pass); it is left empty. Grouping reads the hop again once it has ended.
pub async fn stored_hop_for_grouping(pool: &SqlitePool, mut row: HopRow) -> Result<StoredHop> {
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
        }
    }
    stored_hop(pool, row).await
}

/// A side's pieces in order, then the bytes the row holds.
fn whole(pieces: &[(i64, Vec<u8>)], side: BodySide, tail: Option<Vec<u8>>) -> Vec<u8> {
    let code = i64::from(side.code());
    let tail = tail.unwrap_or_default();
    let mine = || pieces.iter().filter(|(s, _)| *s == code);
    let len: usize = mine().map(|(_, b)| b.len()).sum::<usize>() + tail.len();
    let mut bytes = Vec::with_capacity(len);
    for (_, piece) in mine() {
        bytes.extend_from_slice(piece);
    }
    bytes.extend_from_slice(&tail);
    bytes
}
