//! One batch of journaled events as one transaction: each hop that starts in the batch becomes
//! one new row carrying whatever the batch also says of its request and end; other hops get
//! updates. Replaying a batch (after a crash, or a retry) changes nothing the second time.

use std::collections::{HashMap, HashSet};

use sqlx::SqliteConnection;

use super::write_tx::WriterConn;
use super::{HOPS_NOT_WRITTEN, Result, body_pieces, hop_insert, hops};
use tracer_wire::hop::{BodyPiece, HopEnd, HopEvent, RequestDone, ServerLogLine, WsBatch};

/// Journal bytes per transaction at most (at least one event is always taken).
pub(super) const MAX_BATCH_BYTES: usize = 4 * 1024 * 1024;
/// Events per transaction at most.
pub(super) const MAX_BATCH_EVENTS: usize = 4096;
/// How long the writer's statements wait for another process's write lock before retrying.
pub(super) const WRITER_BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// What a row whose end was lost says.
const END_LOST: &str = "the end of this hop was not recorded (the journal could not be written)";

/// What one transaction carries. The events' body bytes may be moved out while it is written
/// (a failed batch is read again from the journal).
pub(crate) struct BatchWrite<'a> {
    pub events: &'a mut [HopEvent],
    /// Hops whose end could not be journaled: their rows are marked aborted.
    pub lost_ends: &'a [String],
    /// Hops lost since the last committed count, added to `hops_not_written`.
    pub losses: u64,
}

/// What a committed batch did.
pub(crate) struct BatchDone {
    pub hops_inserted: u64,
    /// Lost ends whose hop has no row yet.
    pub lost_ends_waiting: Vec<String>,
}

/// Writes a batch in one `BEGIN IMMEDIATE` transaction on the writer's connection; after any
/// failure that connection is closed, so no transaction or lock outlives it.
pub(crate) async fn write_batch(db: &mut WriterConn, work: BatchWrite<'_>) -> Result<BatchDone> {
    let conn = db.begin().await?;
    let applied = apply(conn, work).await;
    match applied {
        Ok(done) => {
            db.commit().await?;
            Ok(done)
        }
        Err(error) => {
            db.discard().await;
            Err(error)
        }
    }
}

async fn apply(conn: &mut SqliteConnection, work: BatchWrite<'_>) -> Result<BatchDone> {
    let mut moved = take_update_bodies(work.events);
    let pieces = take_pieces(work.events);
    let changes = coalesce(work.events);
    let inserted = hop_insert::insert_new_hops(conn, &changes.new_hops).await?;
    // After the new rows: a piece is kept only for a hop that has one.
    for piece in &pieces {
        body_pieces::insert_piece(conn, piece).await?;
    }
    // An open socket's messages, in journal order (before its end, which may follow in the batch).
    for batch in ws_batches(work.events) {
        super::ws_frames::append(conn, batch).await?;
    }
    // A hop already stored (a journal taken in again) gets its request and end as updates.
    for hop in changes
        .new_hops
        .iter()
        .filter(|h| !inserted.contains(&h.start.id))
    {
        if let Some(done) = hop.request {
            hops::apply_request_done(conn, done).await?;
        }
        if let Some(end) = hop.end {
            hops::apply_end(conn, end).await?;
        }
    }
    let hops_inserted = inserted.len() as u64;
    for change in &changes.updates {
        match change {
            Update::End(end) => {
                let bodies = moved.remove(&end.id).unwrap_or_default();
                hops::apply_end_with_bodies(conn, end, bodies).await?;
            }
            Update::Request(done) => {
                let (bytes, _) = moved.remove(&request_key(&done.id)).unwrap_or_default();
                hops::apply_request_done_with_body(conn, done, bytes).await?;
            }
        }
    }
    for line in &changes.logs {
        hops::insert_server_log(conn, line).await?;
    }
    // A WebSocket's messages, once its row (new or updated) is there.
    let new_ends = changes.new_hops.iter().filter_map(|h| h.end);
    let updated_ends = changes.updates.iter().filter_map(|change| match change {
        Update::End(end) => Some(*end),
        Update::Request(_) => None,
    });
    for end in new_ends.chain(updated_ends) {
        super::ws_frames::write(conn, end).await?;
    }
    let lost_ends_waiting = if work.lost_ends.is_empty() {
        Vec::new()
    } else {
        hops::mark_ends_lost(conn, work.lost_ends, END_LOST).await?
    };
    if work.losses > 0 {
        sqlx::query("insert into counters (name, value) values (?1, ?2) on conflict(name) do update set value = value + ?2")
            .bind(HOPS_NOT_WRITTEN)
            .bind(i64::try_from(work.losses).unwrap_or(i64::MAX))
            .execute(&mut *conn)
            .await?;
    }
    Ok(BatchDone {
        hops_inserted,
        lost_ends_waiting,
    })
}

/// Moves the body bytes out of the events that become updates (hops not started in the batch),
/// so a big body is bound to its statement without another copy. Keyed by hop id (an end) or
/// `request_key` (a request).
fn take_update_bodies(events: &mut [HopEvent]) -> HashMap<String, (Vec<u8>, Vec<u8>)> {
    let started: HashSet<String> = events
        .iter()
        .filter_map(|event| match event {
            HopEvent::Started(start) => Some(start.id.clone()),
            _ => None,
        })
        .collect();
    let mut moved = HashMap::new();
    for event in events.iter_mut() {
        match event {
            HopEvent::Ended(end) if !started.contains(&end.id) => {
                let bodies = (
                    std::mem::take(&mut end.request_body.bytes),
                    std::mem::take(&mut end.response_body.bytes),
                );
                moved.insert(end.id.clone(), bodies);
            }
            HopEvent::RequestDone(done) if !started.contains(&done.id) => {
                let bytes = std::mem::take(&mut done.request_body.bytes);
                moved.insert(request_key(&done.id), (bytes, Vec::new()));
            }
            _ => {}
        }
    }
    moved
}

/// Moves the body pieces out of the events, in journal order (their bytes are bound as they are).
fn take_pieces(events: &mut [HopEvent]) -> Vec<BodyPiece> {
    events
        .iter_mut()
        .filter_map(|event| match event {
            HopEvent::BodyPiece(piece) => Some(BodyPiece {
                id: piece.id.clone(),
                side: piece.side,
                seq: piece.seq,
                bytes: std::mem::take(&mut piece.bytes),
            }),
            _ => None,
        })
        .collect()
}

fn ws_batches(events: &[HopEvent]) -> impl Iterator<Item = &WsBatch> {
    events.iter().filter_map(|event| match event {
        HopEvent::WsMessages(batch) => Some(batch.as_ref()),
        _ => None,
    })
}

fn request_key(id: &str) -> String {
    format!("request {id}")
}

struct Changes<'a> {
    new_hops: Vec<hop_insert::NewHopRow<'a>>,
    updates: Vec<Update<'a>>,
    logs: Vec<&'a ServerLogLine>,
}

enum Update<'a> {
    End(&'a HopEnd),
    Request(&'a RequestDone),
}

fn coalesce(batch: &[HopEvent]) -> Changes<'_> {
    let mut changes = Changes {
        new_hops: Vec::new(),
        updates: Vec::new(),
        logs: Vec::new(),
    };
    let mut started: HashMap<&str, usize> = HashMap::new();
    for event in batch {
        match event {
            HopEvent::Started(start) => {
                started.insert(start.id.as_str(), changes.new_hops.len());
                changes.new_hops.push(hop_insert::NewHopRow {
                    start,
                    request: None,
                    end: None,
                });
            }
            HopEvent::RequestDone(done) => match started.get(done.id.as_str()) {
                Some(&at) => changes.new_hops[at].request = Some(done),
                None => changes.updates.push(Update::Request(done)),
            },
            HopEvent::Ended(end) => match started.get(end.id.as_str()) {
                Some(&at) => changes.new_hops[at].end = Some(end),
                None => changes.updates.push(Update::End(end)),
            },
            HopEvent::ServerLog(line) => changes.logs.push(line),
            // Taken out before (`take_pieces`, `ws_batches`).
            HopEvent::BodyPiece(_) | HopEvent::WsMessages(_) => {}
        }
    }
    changes
}
