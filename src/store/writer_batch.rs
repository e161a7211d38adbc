//! One batch of journaled events as one transaction: each hop that starts in the batch becomes
//! one new row carrying whatever the batch also says of its request and end; other hops get
//! updates. Replaying a batch (after a crash, or a retry) changes nothing the second time.

use sqlx::SqliteConnection;

use super::write_tx::WriterConn;
use super::{HOPS_NOT_WRITTEN, Result, hop_rows, hops};
use crate::hop::{HopEnd, HopEvent, RequestDone, ServerLogLine};

/// What a row whose end was lost says.
pub const END_LOST: &str =
    "the end of this hop was not recorded (the journal could not be written)";

/// What one transaction carries.
pub struct BatchWrite<'a> {
    pub events: &'a [HopEvent],
    /// Hops whose end could not be journaled: their rows are marked aborted.
    pub lost_ends: &'a [String],
    /// Hops lost since the last committed count, added to `hops_not_written`.
    pub losses: u64,
}

/// What a committed batch did.
pub struct BatchDone {
    pub hops_inserted: u64,
    /// Lost ends whose hop has no row yet.
    pub lost_ends_waiting: Vec<String>,
}

/// Writes a batch in one `BEGIN IMMEDIATE` transaction on the writer's connection; after any
/// failure that connection is closed, so no transaction or lock outlives it.
pub async fn write_batch(db: &mut WriterConn, work: &BatchWrite<'_>) -> Result<BatchDone> {
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

async fn apply(conn: &mut SqliteConnection, work: &BatchWrite<'_>) -> Result<BatchDone> {
    let changes = coalesce(work.events);
    let inserted = hop_rows::insert_new_hops(conn, &changes.new_hops).await?;
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
                hops::apply_end(conn, end).await?;
            }
            Update::Request(done) => hops::apply_request_done(conn, done).await?,
        }
    }
    for line in &changes.logs {
        hops::insert_server_log(conn, line).await?;
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

struct Changes<'a> {
    new_hops: Vec<hop_rows::NewHop<'a>>,
    updates: Vec<Update<'a>>,
    logs: Vec<&'a ServerLogLine>,
}

enum Update<'a> {
    End(&'a HopEnd),
    Request(&'a RequestDone),
}

fn coalesce(batch: &[HopEvent]) -> Changes<'_> {
    use std::collections::HashMap;
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
                changes.new_hops.push(hop_rows::NewHop {
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
        }
    }
    changes
}
