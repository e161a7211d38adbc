//! The one writer task and the handles that feed it: every hop event is appended to the journal
//! beside the database (never waiting on SQLite), and the writer moves the journal into SQLite in
//! batched transactions, retrying on a clean connection until the database accepts them.
//!
//! A hop is lost only when its event cannot be appended to the journal (disk full): it is then
//! counted, and the count reaches the `hops_not_written` counter in the same transaction as the
//! next batch. Whatever is still in the journal when the writer gives up is taken in by the next
//! recorder on that database.

pub use super::writer_report::WriterReport;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::journal::{Appender, HOLD};
use super::journal_reader::{JournalReader, ReadBatch};
use super::journal_intake::take_in;
use super::write_tx::WriterConn;
use super::writer_batch::{
    BatchWrite, MAX_BATCH_BYTES, MAX_BATCH_EVENTS, WRITER_BUSY_TIMEOUT, write_batch,
};
use super::{Store, StoreError};
use tracer_wire::hop::{HopEnd, HopEvent, HopSink, HopStart, RequestDone, ServerLogLine};

/// After the last handle is gone, how long a failing database is retried before the rest is
/// left in the journal for the next recorder.
const FINAL_DRAIN: Duration = Duration::from_secs(5);
/// Longest pause between retries of a failing batch.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Batches, once caught up, a lost end waits for its hop's row before it is forgotten.
const LOST_END_PATIENCE: u8 = 3;
/// Most lost ends remembered at once.
const MAX_LOST_ENDS: usize = 100_000;

/// Ids of hops whose start was journaled but whose end was not, with the rounds they waited.
type LostEnds = Mutex<Vec<(String, u8)>>;

#[derive(Debug)]
struct Shared {
    journal: Appender,
    wake: Notify,
    not_written: AtomicU64,
    lost_ends: LostEnds,
    senders: AtomicUsize,
    /// The last append failed (logged once until one succeeds).
    journal_failing: std::sync::atomic::AtomicBool,
    /// The `tracer run` every hop this recorder takes belongs to.
    run_id: Option<String>,
}

/// The sending side, cloned into every connection task. Sending never waits on SQLite.
#[derive(Debug)]
pub struct RecorderHandle {
    shared: Arc<Shared>,
}

impl Clone for RecorderHandle {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::AcqRel);
        RecorderHandle {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for RecorderHandle {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.wake.notify_one();
        }
    }
}

/// The store takes hop events through the journal: appended at once, moved into SQLite by the
/// writer task.
impl HopSink for RecorderHandle {
    /// Records that a hop started. Returns false if it could not be journaled: the hop is then
    /// counted as not written and its end should not be sent.
    fn start(&self, mut start: HopStart) -> bool {
        // A run's id is the boundary, above a client process the forward proxy told.
        if self.shared.run_id.is_some() {
            start.run_id.clone_from(&self.shared.run_id);
        }
        let queued = self.hold(&HopEvent::Started(Box::new(start)));
        if !queued {
            self.shared.not_written.fetch_add(1, Ordering::Relaxed);
        }
        queued
    }

    /// Records that a hop whose start was journaled has ended.
    fn end(&self, end: HopEnd) {
        let id = end.id.clone();
        if !self.append(&HopEvent::Ended(Box::new(end))) {
            self.shared.not_written.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut lost) = self.shared.lost_ends.lock()
                && lost.len() < MAX_LOST_ENDS
            {
                lost.push((id, 0));
            }
        }
    }

    /// Records that a hop's request body was read whole (the hop's end carries it too).
    fn request_done(&self, done: RequestDone) {
        self.hold(&HopEvent::RequestDone(Box::new(done)));
    }

    /// Records that a hop's request body was read whole, from borrowed parts (a big body is
    /// copied once, into the journal frame).
    fn request_read(&self, id: &str, body: &tracer_wire::hop::BodyCapture, ended_unix_ns: i64) {
        let held = self
            .shared
            .journal
            .hold_encoded(|frame| {
                super::journal_codec::encode_request_done(id, body, ended_unix_ns, frame)
            });
        self.held(held);
    }

    /// Journals one piece of a big body straight from the tee's bytes (no copy of them).
    fn body_piece(
        &self,
        id: &str,
        side: tracer_wire::hop::BodySide,
        seq: u32,
        bytes: &[u8],
    ) -> bool {
        let mut head = Vec::with_capacity(64 + id.len());
        super::journal_codec::encode_body_piece_head(id, side, seq, bytes.len(), &mut head);
        self.appended(self.shared.journal.append_parts(&head, bytes))
    }

    /// Records a wrapped server's stderr line.
    fn log_line(&self, line: ServerLogLine) {
        self.append(&HopEvent::ServerLog(Box::new(line)));
    }

    /// Journals an open WebSocket's messages (the store shows them before the socket closes).
    fn ws_messages(&self, batch: tracer_wire::hop::WsBatch) -> bool {
        self.append(&HopEvent::WsMessages(Box::new(batch)))
    }
}

impl RecorderHandle {
    fn append(&self, event: &HopEvent) -> bool {
        self.appended(self.shared.journal.append(event))
    }

    /// Holds a hop's start or request for the frame that ends it (see [`Appender::hold`]).
    fn hold(&self, event: &HopEvent) -> bool {
        let held = self.shared.journal.hold(event);
        self.held(held)
    }

    fn held(&self, held: std::io::Result<bool>) -> bool {
        match held {
            // The writer is told of the first frame held, to write it in time; the frames
            // held after it go with it.
            Ok(first) => {
                self.taken(first);
                true
            }
            Err(error) => self.appended(Err(error)),
        }
    }

    /// An event is in the journal (or held for it); `wake` tells the writer.
    fn taken(&self, wake: bool) {
        if self.shared.journal_failing.swap(false, Ordering::Relaxed) {
            tracing::warn!("the journal takes hop events again");
        }
        if wake {
            self.shared.wake.notify_one();
        }
    }

    fn appended(&self, result: std::io::Result<()>) -> bool {
        match result {
            Ok(()) => {
                self.taken(true);
                true
            }
            Err(error) => {
                // Said once per failing spell: a full disk must not also flood the log.
                if !self.shared.journal_failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(%error, "could not append to the journal; hops are lost (and counted) until it can be written");
                }
                false
            }
        }
    }

    /// Hops lost so far in this process.
    #[cfg(test)]
    pub(crate) fn not_written(&self) -> u64 {
        self.shared.not_written.load(Ordering::Relaxed)
    }

    /// This process's journal file.
    #[cfg(test)]
    pub(crate) fn journal_path(&self) -> PathBuf {
        self.shared.journal.path().to_path_buf()
    }
}

/// Starts the writer task for a store.
pub struct Recorder;

impl Recorder {
    /// Creates this process's journal beside the database, takes in journals that dead
    /// processes left, and starts the writer.
    pub fn spawn(store: Store) -> Result<(RecorderHandle, JoinHandle<WriterReport>), StoreError> {
        Self::spawn_for_run(store, None)
    }

    /// `spawn`, for a `tracer run`: every hop started through the handle carries `run_id`.
    pub fn spawn_for_run(
        store: Store,
        run_id: Option<String>,
    ) -> Result<(RecorderHandle, JoinHandle<WriterReport>), StoreError> {
        let journal = Appender::create(store.path()).map_err(|e| StoreError::Open {
            path: store.path().to_path_buf(),
            message: format!("creating the journal beside it: {e}"),
        })?;
        let reader = JournalReader::open(journal.path()).map_err(|e| StoreError::Open {
            path: store.path().to_path_buf(),
            message: format!("reading the journal: {e}"),
        })?;
        let orphans = super::journal::orphans(store.path());
        let shared = Arc::new(Shared {
            journal,
            wake: Notify::new(),
            not_written: AtomicU64::new(0),
            lost_ends: Mutex::new(Vec::new()),
            senders: AtomicUsize::new(1),
            journal_failing: std::sync::atomic::AtomicBool::new(false),
            run_id,
        });
        let handle = RecorderHandle {
            shared: shared.clone(),
        };
        let task = tokio::spawn(async move {
            let mut writer = Writer {
                db: WriterConn::new(&store, WRITER_BUSY_TIMEOUT),
                shared,
                report: WriterReport::default(),
                persisted_losses: 0,
            };
            writer.take_in(orphans).await;
            writer.run(reader).await;
            writer.report
        });
        Ok((handle, task))
    }
}

struct Writer {
    db: WriterConn,
    shared: Arc<Shared>,
    report: WriterReport,
    persisted_losses: u64,
}

impl Writer {
    fn closed(&self) -> bool {
        self.shared.senders.load(Ordering::Acquire) == 0
    }

    async fn run(&mut self, mut reader: JournalReader) {
        let mut failing_since: Option<Instant> = None;
        loop {
            let closed = self.closed();
            self.write_held_in_time(closed);
            let limit = self.shared.journal.written();
            let lost_ends = self
                .shared
                .lost_ends
                .lock()
                .map(|mut lost| std::mem::take(&mut *lost))
                .unwrap_or_default();
            let losses = self.shared.not_written.load(Ordering::Relaxed);
            if reader.pos == limit && lost_ends.is_empty() && losses == self.persisted_losses {
                if closed {
                    break;
                }
                match self.shared.journal.held_since() {
                    // Woken by the next event, or when the held frames are due.
                    Some(since) => {
                        let due = HOLD.saturating_sub(since.elapsed());
                        tokio::select! {
                            () = self.shared.wake.notified() => {}
                            () = tokio::time::sleep(due) => {}
                        }
                    }
                    None => self.shared.wake.notified().await,
                }
                continue;
            }
            let mut batch = match reader.read(limit, MAX_BATCH_BYTES, MAX_BATCH_EVENTS) {
                Ok(batch) => batch,
                Err(error) => {
                    tracing::error!(%error, "reading the journal");
                    ReadBatch {
                        events: Vec::new(),
                        end: reader.pos,
                        corrupt: Some(error.to_string()),
                    }
                }
            };
            let caught_up = batch.end == limit;
            match self.write(&mut batch, lost_ends, losses, caught_up).await {
                Ok(()) => failing_since = None,
                Err(error) => {
                    let since = *failing_since.get_or_insert_with(Instant::now);
                    tracing::warn!(%error, "the database did not take a batch of hops; retrying");
                    if closed && since.elapsed() >= FINAL_DRAIN {
                        break;
                    }
                    let pause = Duration::from_millis(50)
                        .saturating_mul(1 << since.elapsed().as_secs().min(5))
                        .min(MAX_BACKOFF);
                    tokio::time::sleep(pause).await;
                    continue;
                }
            }
            reader.pos = batch.end;
            if let Some(corrupt) = batch.corrupt {
                tracing::error!(%corrupt, "the journal is unreadable past this point; skipping it");
                reader.pos = limit;
            }
            if self.shared.journal.truncate_if_consumed(reader.pos) {
                reader.pos = 0;
            } else if let Err(error) = self.shared.journal.release_consumed(reader.pos) {
                tracing::debug!(%error, "giving the journal's consumed space back");
            }
        }
        self.report.hops_not_written = self.shared.not_written.load(Ordering::Relaxed);
        let limit = self.shared.journal.written();
        if reader.pos >= limit {
            if let Err(error) = self.shared.journal.remove() {
                tracing::warn!(%error, "removing the empty journal");
            }
        } else {
            self.report.hops_left_in_journal = reader.starts_left(limit);
            self.report.journal_left = Some(self.shared.journal.path().to_path_buf());
        }
        self.db.discard().await;
    }

    /// Writes the frames the handles hold once they are [`HOLD`] old, or all of them when the
    /// recording has closed.
    fn write_held_in_time(&self, closed: bool) {
        let journal = &self.shared.journal;
        let due = journal
            .held_since()
            .is_some_and(|since| closed || since.elapsed() >= HOLD);
        if due && let Err(error) = journal.write_held() {
            if !self.shared.journal_failing.swap(true, Ordering::Relaxed) {
                tracing::warn!(%error, "could not append to the journal; hops are lost (and counted) until it can be written");
            }
        }
    }

    /// Writes one batch with the lost ends and the loss count in the same transaction. On
    /// failure the lost ends go back to be tried again.
    async fn write(
        &mut self,
        batch: &mut ReadBatch,
        lost_ends: Vec<(String, u8)>,
        losses: u64,
        caught_up: bool,
    ) -> super::Result<()> {
        let ids: Vec<String> = lost_ends.iter().map(|(id, _)| id.clone()).collect();
        let events = batch.events.len() as u64;
        let work = BatchWrite {
            events: &mut batch.events,
            lost_ends: &ids,
            losses: losses - self.persisted_losses,
        };
        match write_batch(&mut self.db, work).await {
            Ok(done) => {
                self.persisted_losses = losses;
                self.report.hops_written += done.hops_inserted;
                self.report.events_written += events;
                self.report.batches += 1;
                let waiting: std::collections::HashSet<String> =
                    done.lost_ends_waiting.into_iter().collect();
                let still = lost_ends
                    .into_iter()
                    .filter(|(id, _)| waiting.contains(id))
                    .map(|(id, rounds)| (id, rounds + u8::from(caught_up)))
                    .filter(|(_, rounds)| *rounds < LOST_END_PATIENCE);
                if let Ok(mut lost) = self.shared.lost_ends.lock() {
                    lost.extend(still);
                }
                Ok(())
            }
            Err(error) => {
                if let Ok(mut lost) = self.shared.lost_ends.lock() {
                    lost.extend(lost_ends);
                }
                Err(error)
            }
        }
    }

    /// Takes in the journals of processes that are gone (see [`super::journal_intake`]).
    async fn take_in(&mut self, orphans: Vec<(PathBuf, std::fs::File)>) {
        self.report.hops_taken_in += take_in(&mut self.db, orphans).await;
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
