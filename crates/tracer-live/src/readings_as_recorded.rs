//! Readings kept while recording: a running proxy reads each large model request once, soon
//! after it ends, and keeps its reading (`kept_readings`), so the first reader of a long
//! session takes readings back instead of parsing hundreds of large bodies. Each body is read
//! on a thread of the keeper's own, never on the runtime's threads that forward traffic.

use std::collections::BTreeSet;

use super::kept_readings::{KeptTextIds, ToKeep};
use tracer_store::{Result, Store, StoreError};
use tracer_trace::read::read_once::{LET_GO_BYTES, SharedTexts};

/// Hops looked at in one step, at most: a step's share of a grouping pass stays small.
const STEP_HOPS: i64 = 16;
/// Request bytes read before the texts held between steps are let go of (and looked up again
/// by digest): a session's history stays shared, and what is held (never more than what was
/// read) stays bounded.
const HELD_BYTES: usize = 32 << 20;

/// What a step holds while it reads: the texts read so far and the readings to write.
struct Held {
    shared: SharedTexts,
    batch: ToKeep,
}

/// What the keeper remembers between steps.
#[derive(Debug, Default)]
pub struct RecordedReadings {
    /// The highest `seq` looked at.
    cursor: i64,
    /// Hops seen in flight, looked at again until they end.
    open: BTreeSet<i64>,
    /// The texts read so far, so a re-sent history is the same `Arc`s, and their kept ids.
    shared: SharedTexts,
    ids: KeptTextIds,
    /// Request bytes read since `shared` was last let go of.
    read_bytes: usize,
    thread: ReadingThread,
}

/// The job a [`ReadingThread`] runs.
type Job = Box<dyn FnOnce() + Send>;

/// The one thread the keeper reads bodies on, started with its first job and ended when it is
/// dropped: not the runtime's threads, which forward traffic, and always the same one, so the
/// memory a reading takes is reused by the next instead of growing an allocator arena on each
/// thread of a pool.
#[derive(Default)]
struct ReadingThread {
    jobs: Option<std::sync::mpsc::Sender<Job>>,
}

impl std::fmt::Debug for ReadingThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadingThread")
    }
}

impl ReadingThread {
    /// Runs `job` on the thread; None when it panicked or the thread could not start.
    async fn run<T: Send + 'static>(
        &mut self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (done, result) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = done.send(job());
        });
        let jobs = match &self.jobs {
            Some(jobs) => jobs.clone(),
            None => {
                let (jobs, queue) = std::sync::mpsc::channel::<Job>();
                std::thread::Builder::new()
                    .name("tracer-readings".into())
                    .spawn(move || {
                        for job in queue {
                            // A job that panics drops its sender: its step sees None.
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                        }
                    })
                    .ok()?;
                self.jobs = Some(jobs.clone());
                jobs
            }
        };
        if jobs.send(job).is_err() {
            self.jobs = None;
            return None;
        }
        result.await.ok()
    }
}

impl RecordedReadings {
    pub fn new() -> Self {
        Self::default()
    }

    /// One step: reads and keeps the readings of up to [`STEP_HOPS`] large model requests that
    /// have ended since the last step (or were in flight then). How many were kept.
    pub async fn step(&mut self, store: &Store) -> Result<usize> {
        let open: Vec<i64> = self.open.iter().copied().collect();
        let mut found = store.requests_again(&open).await?;
        let min_len = i64::try_from(LET_GO_BYTES).unwrap_or(i64::MAX);
        found.extend(
            store
                .requests_after(self.cursor, min_len, STEP_HOPS)
                .await?,
        );
        if self.read_bytes > HELD_BYTES {
            (self.shared, self.ids, self.read_bytes) = Default::default();
        }
        // Taken while the step runs: a step that fails leaves neither, so no id is ever kept
        // for a text whose `Arc` (and address) is gone.
        let ids = std::mem::take(&mut self.ids);
        let mut held = Some(Held {
            shared: std::mem::take(&mut self.shared),
            batch: ToKeep::knowing(&ids),
        });
        let mut taken = 0;
        for request in found {
            self.cursor = self.cursor.max(request.seq);
            if !request.settled {
                self.open.insert(request.seq);
                continue;
            }
            self.open.remove(&request.seq);
            if request.kept {
                continue;
            }
            let stored = match store.hop_by_id(&request.id).await {
                Ok(stored) => stored,
                // Gone (deleted) or unreadable: nothing to keep; readers say why.
                Err(StoreError::NotFound(_) | StoreError::Malformed(_)) => continue,
                Err(other) => return Err(other),
            };
            let Some(mut with) = held.take() else { break };
            let read = self.thread.run(move || {
                let hop = crate::load::recorded(stored);
                tracer_trace::read::recorded_hop::read_into(&hop, &mut with.shared);
                let bytes = hop.end.as_ref().map_or(0, |e| e.request_body.bytes.len());
                let added = with.batch.add(&hop);
                (with, added, bytes)
            });
            // A reading that panicked is a reader's bug, met again by readers: this step ends.
            let Some((with, added, bytes)) = read.await else {
                break;
            };
            self.read_bytes += bytes;
            taken += usize::from(added);
            held = Some(with);
        }
        let Some(Held { shared, batch }) = held else {
            self.read_bytes = 0;
            return Ok(0);
        };
        self.ids = match taken {
            0 => ids,
            _ => batch.write(store).await?,
        };
        self.shared = shared;
        Ok(taken)
    }
}

#[cfg(test)]
#[path = "readings_as_recorded_tests.rs"]
mod tests;
