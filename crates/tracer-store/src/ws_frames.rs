//! A WebSocket hop's messages in `ws_frames` (and `hops.websocket`): written as they pass while
//! the socket is open (batches), or all with the hop's end (an import, an older journal); read
//! back onto `HopEnd::websocket` by every reader of whole hops, in flight or ended.

use sqlx::{SqliteConnection, SqlitePool};

use super::Result;
use super::hop_columns::StoredHop;
use tracer_wire::hop::{HopEnd, WsBatch, WsDirection, WsMessage, WsRecord};

/// Writes an end's record. An end that lists messages brings them all (the old rows go first,
/// for a journal taken in twice); an end listing none only settles the counts, its messages
/// having come in batches as they passed.
pub async fn write(conn: &mut SqliteConnection, end: &HopEnd) -> Result<()> {
    let Some(record) = &end.websocket else {
        return Ok(());
    };
    if !record.messages.is_empty() {
        sqlx::query("delete from ws_frames where hop_id = ?1")
            .bind(&end.id)
            .execute(&mut *conn)
            .await?;
    }
    insert(conn, &end.id, 0, record).await
}

/// Writes a batch of an open socket's messages (again, when a journal is taken in twice: the
/// same rows), for a hop whose row is there.
pub(crate) async fn append(conn: &mut SqliteConnection, batch: &WsBatch) -> Result<()> {
    let known: Option<i64> = sqlx::query_scalar("select 1 from hops where id = ?1")
        .bind(&batch.id)
        .fetch_optional(&mut *conn)
        .await?;
    if known.is_none() {
        return Ok(());
    }
    insert(conn, &batch.id, batch.first_seq, &batch.record).await
}

/// Rows `first_seq`... for `record`'s messages, and the hop's counts.
async fn insert(
    conn: &mut SqliteConnection,
    hop_id: &str,
    first_seq: u64,
    record: &WsRecord,
) -> Result<()> {
    for (n, m) in record.messages.iter().enumerate() {
        let seq = first_seq.saturating_add(n as u64);
        sqlx::query(
            "insert or replace into ws_frames (hop_id, seq, direction, at_unix_ns, opcode, size, wire_size,
                 frames, compressed, complete, data, error)
             values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .bind(hop_id)
        .bind(i64::try_from(seq).unwrap_or(i64::MAX))
        .bind(m.direction.as_str())
        .bind(m.at_unix_ns)
        .bind(i64::from(m.opcode))
        .bind(i64::try_from(m.size).unwrap_or(i64::MAX))
        .bind(i64::try_from(m.wire_size).unwrap_or(i64::MAX))
        .bind(i64::from(m.frames))
        .bind(m.compressed)
        .bind(m.complete)
        .bind(m.data.as_slice())
        .bind(m.error.as_deref())
        .execute(&mut *conn)
        .await?;
    }
    let meta = serde_json::json!({
        "extensions": record.extensions,
        "not_listed": record.not_listed,
    });
    sqlx::query("update hops set websocket = ?2 where id = ?1")
        .bind(hop_id)
        .bind(meta.to_string())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

type FrameRow = (
    String,
    i64,
    i64,
    i64,
    i64,
    i64,
    bool,
    bool,
    Vec<u8>,
    Option<String>,
);

/// Puts a hop's messages back on its end, when its row says it has some (`hops.websocket`).
pub(crate) async fn attach(
    pool: &SqlitePool,
    hop: &mut StoredHop,
    meta: Option<String>,
) -> Result<()> {
    let Some(meta) = meta else { return Ok(()) };
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap_or_default();
    let rows: Vec<FrameRow> = sqlx::query_as(
        "select direction, at_unix_ns, opcode, size, wire_size, frames, compressed, complete,
             data, error
         from ws_frames where hop_id = ?1 order by seq",
    )
    .bind(&hop.start.id)
    .fetch_all(pool)
    .await?;
    let messages = rows
        .into_iter()
        .filter_map(|row| {
            let (direction, at, opcode, size, wire, frames, compressed, complete, data, error) =
                row;
            Some(WsMessage {
                direction: WsDirection::parse(&direction)?,
                at_unix_ns: at,
                opcode: u8::try_from(opcode).ok()?,
                size: u64::try_from(size).unwrap_or(0),
                wire_size: u64::try_from(wire).unwrap_or(0),
                frames: u32::try_from(frames).unwrap_or(0),
                compressed,
                complete,
                data,
                error,
            })
        })
        .collect();
    hop.end.websocket = Some(WsRecord {
        messages,
        not_listed: meta["not_listed"].as_u64().unwrap_or(0),
        extensions: meta["extensions"].as_str().unwrap_or("").to_string(),
    });
    Ok(())
}
