//! The one writer task: takes hop events from a bounded channel and writes them in batched
//! transactions, so recording never makes traffic wait on the database.
//!
//! Hops the writer could not keep (channel full, database failing) are counted; the count is
//! added to the `hops_not_written` counter as soon as the database accepts writes again.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{HOPS_NOT_WRITTEN, Store, hop_rows, hops};
use crate::hop::{HopEnd, HopEvent, HopStart, RequestDone, ServerLogLine};

/// Events per transaction at most.
const MAX_BATCH: usize = 2048;
/// Attempts at one batch before its hops are counted as not written.
const ATTEMPTS: u32 = 3;

/// The sending side, cloned into every connection task. Sending never waits.
#[derive(Debug, Clone)]
pub struct RecorderHandle {
    tx: mpsc::Sender<HopEvent>,
    not_written: Arc<AtomicU64>,
    lost_ends: LostEnds,
}

/// Ids of hops whose start was queued but whose end was not: the writer marks their rows so
/// none stays `in_flight` for ever. Bounded; past the bound the hops are still counted.
/// Each id with the number of batches it has waited for its start to be written.
type LostEnds = Arc<std::sync::Mutex<Vec<(String, u8)>>>;

/// Batches a lost end waits for its hop's start before it is forgotten (the start was lost too).
const LOST_END_PATIENCE: u8 = 3;

/// Most lost ends remembered at once.
const MAX_LOST_ENDS: usize = 100_000;

/// What a row whose end was lost says.
const END_LOST: &str = "the end of this hop was not recorded (the store's queue was full)";

impl RecorderHandle {
    /// Records that a hop started. Returns false if the event could not be queued (channel full
    /// or writer gone): the hop is then counted as not written and its end should not be sent.
    pub fn start(&self, start: HopStart) -> bool {
        let queued = self.tx.try_send(HopEvent::Started(Box::new(start))).is_ok();
        if !queued {
            self.not_written.fetch_add(1, Ordering::Relaxed);
        }
        queued
    }

    /// Records that a hop whose start was queued has ended.
    pub fn end(&self, end: HopEnd) {
        if let Err(error) = self.tx.try_send(HopEvent::Ended(Box::new(end))) {
            self.not_written.fetch_add(1, Ordering::Relaxed);
            let HopEvent::Ended(end) = error.into_inner() else {
                return;
            };
            if let Ok(mut lost) = self.lost_ends.lock()
                && lost.len() < MAX_LOST_ENDS
            {
                lost.push((end.id, 0));
            }
        }
    }

    /// Records that a hop's request body was read whole; dropped silently when the queue is full
    /// (the hop's end carries the same body).
    pub fn request_done(&self, done: RequestDone) {
        let _ = self.tx.try_send(HopEvent::RequestDone(Box::new(done)));
    }

    /// Queues a wrapped server's stderr line; dropped silently when the queue is full.
    pub fn log_line(&self, line: ServerLogLine) {
        let _ = self.tx.try_send(HopEvent::ServerLog(Box::new(line)));
    }

    /// Hops lost so far in this process.
    pub fn not_written(&self) -> u64 {
        self.not_written.load(Ordering::Relaxed)
    }
}

/// What the writer did over its life, returned when every handle is dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterReport {
    /// Hops whose start was written.
    pub hops_written: u64,
    pub events_written: u64,
    pub batches: u64,
    /// Hops counted as not written (queueing and database failures together).
    pub hops_not_written: u64,
}

/// Starts the writer task for a store.
pub struct Recorder;

impl Recorder {
    pub fn spawn(store: Store, capacity: usize) -> (RecorderHandle, JoinHandle<WriterReport>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let not_written = Arc::new(AtomicU64::new(0));
        let lost_ends = LostEnds::default();
        let handle = RecorderHandle {
            tx,
            not_written: not_written.clone(),
            lost_ends: lost_ends.clone(),
        };
        let task = tokio::spawn(run_writer(store, rx, not_written, lost_ends));
        (handle, task)
    }
}

async fn run_writer(
    store: Store,
    mut rx: mpsc::Receiver<HopEvent>,
    not_written: Arc<AtomicU64>,
    lost_ends: LostEnds,
) -> WriterReport {
    let mut report = WriterReport::default();
    let mut persisted_losses = 0u64;
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        match write_batch(&store, &batch).await {
            Ok(()) => {
                report.events_written += batch.len() as u64;
                report.hops_written += batch
                    .iter()
                    .filter(|event| matches!(event, HopEvent::Started(_)))
                    .count() as u64;
                report.batches += 1;
            }
            Err(error) => {
                let lost = hops_in(&batch);
                not_written.fetch_add(lost, Ordering::Relaxed);
                tracing::warn!(%error, lost, "could not write a batch of hops");
            }
        }
        batch.clear();
        mark_lost_ends(&store, &lost_ends).await;
        let losses = not_written.load(Ordering::Relaxed);
        if losses > persisted_losses
            && store
                .add_to_counter(
                    HOPS_NOT_WRITTEN,
                    i64::try_from(losses - persisted_losses).unwrap_or(i64::MAX),
                )
                .await
                .is_ok()
        {
            persisted_losses = losses;
        }
    }
    report.hops_not_written = not_written.load(Ordering::Relaxed);
    let unpersisted = report.hops_not_written.saturating_sub(persisted_losses);
    if unpersisted > 0 {
        let delta = i64::try_from(unpersisted).unwrap_or(i64::MAX);
        if let Err(error) = store.add_to_counter(HOPS_NOT_WRITTEN, delta).await {
            tracing::warn!(%error, "could not store the count of hops not written");
        }
    }
    report
}

/// Marks the rows of hops whose end was lost as aborted; ids whose start is not written yet
/// stay for the next batch.
async fn mark_lost_ends(store: &Store, lost_ends: &LostEnds) {
    let lost = match lost_ends.lock() {
        Ok(mut lost) if !lost.is_empty() => std::mem::take(&mut *lost),
        _ => return,
    };
    let ids: Vec<String> = lost.iter().map(|(id, _)| id.clone()).collect();
    match hops::mark_ends_lost(store, &ids, END_LOST).await {
        Ok(waiting) => {
            let waiting: std::collections::HashSet<String> = waiting.into_iter().collect();
            let still: Vec<(String, u8)> = lost
                .into_iter()
                .filter(|(id, rounds)| *rounds + 1 < LOST_END_PATIENCE && waiting.contains(id))
                .map(|(id, rounds)| (id, rounds + 1))
                .collect();
            if let Ok(mut lost) = lost_ends.lock() {
                lost.extend(still);
            }
        }
        Err(error) => tracing::warn!(%error, "could not mark hops whose end was lost"),
    }
}

/// Distinct hops in a batch (a start and its end are one hop).
fn hops_in(batch: &[HopEvent]) -> u64 {
    let mut ids: Vec<&str> = batch
        .iter()
        .filter_map(|event| match event {
            HopEvent::Started(start) => Some(start.id.as_str()),
            HopEvent::Ended(end) => Some(end.id.as_str()),
            HopEvent::RequestDone(done) => Some(done.id.as_str()),
            HopEvent::ServerLog(_) => None,
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len() as u64
}

async fn write_batch(store: &Store, batch: &[HopEvent]) -> super::Result<()> {
    let mut last_error = None;
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
        }
        match try_write_batch(store, batch).await {
            Ok(()) => return Ok(()),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| super::StoreError::Malformed("empty batch".into())))
}

async fn try_write_batch(store: &Store, batch: &[HopEvent]) -> super::Result<()> {
    let changes = coalesce(batch);
    let mut tx = store.pool().begin().await?;
    hop_rows::insert_new_hops(&mut tx, &changes.new_hops).await?;
    for change in &changes.updates {
        match change {
            // An end whose start was lost is already counted as not written.
            Update::End(end) => {
                hops::apply_end(&mut tx, end).await?;
            }
            Update::Request(done) => hops::apply_request_done(&mut tx, done).await?,
        }
    }
    for line in &changes.logs {
        hops::insert_server_log(&mut tx, line).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// A batch reduced to the fewest statements: each hop that starts in the batch becomes one new
/// row carrying whatever the batch also says of its request and end; other hops get updates.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hop::{Role, Transport};

    fn start(id: &str) -> HopStart {
        HopStart {
            id: id.into(),
            route: "model".into(),
            role: Role::Model,
            transport: Transport::Http,
            peer: "127.0.0.1:1".into(),
            method: "POST".into(),
            path: "/api/chat".into(),
            url: "http://127.0.0.1:2/api/chat".into(),
            request_headers: Vec::new(),
            started_unix_ns: 1,
        }
    }

    #[tokio::test]
    async fn a_full_channel_never_blocks_and_losses_are_counted_in_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).await.unwrap();
        let (handle, task) = Recorder::spawn(store.clone(), 4);
        // No await between sends: the writer cannot drain, so most of these find the channel full.
        let queued = (0..100)
            .filter(|i| handle.start(start(&format!("h{i}"))))
            .count() as u64;
        assert!(queued < 100);
        assert_eq!(handle.not_written(), 100 - queued);
        drop(handle);
        let report = task.await.unwrap();
        assert_eq!(report.hops_written, queued);
        assert_eq!(report.hops_not_written, 100 - queued);
        assert_eq!(store.hop_count().await.unwrap(), queued as i64);
        assert_eq!(
            store.counter(HOPS_NOT_WRITTEN).await.unwrap(),
            (100 - queued) as i64
        );
    }

    #[tokio::test]
    async fn a_hop_whose_end_was_lost_is_marked_aborted_not_left_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).await.unwrap();
        let (handle, task) = Recorder::spawn(store.clone(), 4);
        for id in ["a", "b", "c", "d"] {
            assert!(handle.start(start(id)));
        }
        handle.end(HopEnd {
            id: "a".into(),
            state: Some(crate::hop::HopState::Complete),
            ..HopEnd::default()
        });
        assert_eq!(handle.not_written(), 1, "the end found the queue full");
        drop(handle);
        task.await.unwrap();
        let hop = store.hop("a").await.unwrap();
        assert_eq!(hop.state, crate::hop::HopState::Aborted);
        assert_eq!(hop.end.error.as_deref(), Some(END_LOST));
        assert_eq!(
            store.hop("b").await.unwrap().state,
            crate::hop::HopState::InFlight
        );
    }

    #[tokio::test]
    async fn an_end_that_never_saw_the_request_keeps_the_stored_request_body() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).await.unwrap();
        let mut conn = store.pool().acquire().await.unwrap();
        hops::insert_start(&mut conn, &start("a")).await.unwrap();
        let body = crate::hop::BodyCapture::whole(b"{\"model\":\"m\"}".to_vec());
        let done = RequestDone {
            id: "a".into(),
            request_body: body.clone(),
            request_ended_unix_ns: 5,
        };
        hops::apply_request_done(&mut conn, &done).await.unwrap();
        // The client left before the response head: this end knows nothing of the request.
        let end = HopEnd {
            id: "a".into(),
            state: Some(crate::hop::HopState::Aborted),
            error: Some("client went away before the response".into()),
            ..HopEnd::default()
        };
        assert!(hops::apply_end(&mut conn, &end).await.unwrap());
        drop(conn);
        let hop = store.hop("a").await.unwrap();
        assert_eq!(hop.state, crate::hop::HopState::Aborted);
        assert_eq!(hop.end.request_body, body);
        assert_eq!(hop.end.request_ended_unix_ns, Some(5));
    }

    #[tokio::test]
    async fn starts_and_ends_become_one_completed_row() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).await.unwrap();
        let (handle, task) = Recorder::spawn(store.clone(), 16);
        assert!(handle.start(start("a")));
        handle.end(HopEnd {
            id: "a".into(),
            state: Some(crate::hop::HopState::Complete),
            status: Some(200),
            ..HopEnd::default()
        });
        drop(handle);
        task.await.unwrap();
        let hop = store.hop("a").await.unwrap();
        assert_eq!(hop.state, crate::hop::HopState::Complete);
        assert_eq!(hop.end.status, Some(200));
    }
}
