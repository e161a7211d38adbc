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
use super::journal_intake::take_in;
use super::journal_reader::{JournalReader, ReadBatch};
use super::write_tx::WriterConn;
use super::writer_batch::{
    BatchWrite, MAX_BATCH_BYTES, MAX_BATCH_EVENTS, WRITER_BUSY_TIMEOUT, write_batch,
};
pub use super::writer_handle::RecorderHandle;
use super::{Store, StoreError};

/// After the last handle is gone, how long a failing database is retried before the rest is
/// left in the journal for the next recorder.
const FINAL_DRAIN: Duration = Duration::from_secs(5);
/// Longest pause between retries of a failing batch.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Batches, once caught up, a lost end waits for its hop's row before it is forgotten.
const LOST_END_PATIENCE: u8 = 3;
/// Most lost ends remembered at once.
pub(super) const MAX_LOST_ENDS: usize = 100_000;

/// Ids of hops whose start was journaled but whose end was not, with the rounds they waited.
type LostEnds = Mutex<Vec<(String, u8)>>;

#[derive(Debug)]
pub(super) struct Shared {
    pub(super) journal: Appender,
    pub(super) wake: Notify,
    pub(super) not_written: AtomicU64,
    pub(super) lost_ends: LostEnds,
    pub(super) senders: AtomicUsize,
    /// The last append failed (logged once until one succeeds).
    pub(super) journal_failing: std::sync::atomic::AtomicBool,
    /// The `tracer run` every hop this recorder takes belongs to.
    pub(super) run_id: Option<String>,
}

impl Shared {
    /// A write to the journal failed: said once per failing spell, so a full disk does not
    /// also flood the log.
    pub(super) fn journal_failed(&self, error: &std::io::Error) {
        if !self.journal_failing.swap(true, Ordering::Relaxed) {
            tracing::warn!(%error, "could not append to the journal; hops are lost (and counted) until it can be written");
        }
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
            self.shared.journal_failed(&error);
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
