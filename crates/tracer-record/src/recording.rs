//! One recording, started and finished the same way by every capture path (`tracer proxy`,
//! `run`, `up`, `demo`, `wrap`).
//!
//! [`Recording::start`] starts the store's writer (for a run's id, when there is one); the
//! capture records through [`Recording::recorder`] or [`Recording::sink`]; work beside it
//! ([`Beside`]: grouping, keeping readings, announcing routes) runs over the same store; and
//! [`Recording::finish`] drains the writer (within a bound, if asked), stops that work, takes
//! the last steps it left once every hop is written, and reports what happened for the caller
//! to say. The live exporter is not part of it: it is a face above, started beside.

pub mod beside;

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tracer_store::{Recorder, RecorderHandle, Store, StoreError, WriterReport};
use tracer_wire::hop::Sink;

pub use beside::{Beside, LastStep, StopAsked};

/// A recording in progress: the writer taking hops into the store, and the work beside it.
pub struct Recording {
    store: Store,
    recorder: RecorderHandle,
    writer: JoinHandle<WriterReport>,
    beside: Vec<beside::Running>,
}

impl Recording {
    /// Starts recording into `store`: this process's journal beside the database (journals dead
    /// processes left are taken in) and the writer. Every hop recorded carries `run_id` when
    /// there is one (`tracer run`, and the servers it wraps).
    pub fn start(store: Store, run_id: Option<String>) -> Result<Recording, StoreError> {
        let (recorder, writer) = Recorder::spawn_for_run(store.clone(), run_id)?;
        Ok(Recording {
            store,
            recorder,
            writer,
            beside: Vec::new(),
        })
    }

    /// The recording, with `work` running beside it.
    #[must_use]
    pub fn beside(mut self, work: Beside) -> Recording {
        self.add(work);
        self
    }

    /// Starts `work` beside the recording; it stops (in the order added) when it finishes.
    pub fn add(&mut self, work: Beside) {
        self.beside.push(work.spawn(self.store.clone()));
    }

    /// A handle a proxy records through; the writer drains once every handle is dropped.
    pub fn recorder(&self) -> RecorderHandle {
        self.recorder.clone()
    }

    /// The same, shared as a sink (what `tracer wrap`'s pumps hold).
    pub(crate) fn sink(&self) -> Sink {
        Arc::new(self.recorder.clone())
    }

    /// Ends the recording: waits for the writer to take every hop (as `finish` says), stops
    /// the work beside it, waits for other writers when asked, then takes the last steps that
    /// work left unless the database refused hops. Every other handle must be dropped first.
    pub async fn finish(self, finish: Finish) -> Finished {
        let Recording {
            store: _,
            recorder,
            writer,
            beside,
        } = self;
        drop(recorder);
        let writer = match finish.writer_wait {
            None => writer.await.map_err(WriterLost::Failed),
            Some(bound) => match tokio::time::timeout(bound, writer).await {
                Ok(joined) => joined.map_err(WriterLost::Failed),
                Err(_) => Err(WriterLost::TimedOut(bound)),
            },
        };
        let mut last_steps = Vec::new();
        for running in beside {
            last_steps.extend(running.stop().await);
        }
        if !finish.others_settle.is_zero() {
            tokio::time::sleep(finish.others_settle).await;
        }
        let mut failed = Vec::new();
        if matches!(&writer, Ok(report) if report.journal_left.is_none()) {
            for (doing, step) in last_steps {
                if let Err(error) = step.take().await {
                    failed.push(LastStepFailed { doing, error });
                }
            }
        }
        Finished { writer, failed }
    }
}

/// How a recording finishes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Finish {
    /// How long to wait for the writer; `None`: until it has drained (it gives up on a failing
    /// database by itself, leaving the journal for the next tracer).
    writer_wait: Option<Duration>,
    /// How long other processes writing into the same database (the stdio servers `tracer run`
    /// wraps, exiting after their host) are given before the last steps read it.
    others_settle: Duration,
}

impl Finish {
    /// Waits until the writer has drained.
    pub fn until_drained() -> Finish {
        Finish::default()
    }

    /// Waits at most `bound` for the writer: what it has not written by then waits in the
    /// journal beside the database for the next tracer on it.
    pub(crate) fn within(bound: Duration) -> Finish {
        Finish {
            writer_wait: Some(bound),
            ..Finish::default()
        }
    }

    /// Then gives other writers into the same database `settle` before the last steps.
    #[must_use]
    pub fn then_settle(self, settle: Duration) -> Finish {
        Finish {
            others_settle: settle,
            ..self
        }
    }
}

/// What finishing a recording found, for the caller to say.
#[derive(Debug)]
pub struct Finished {
    /// What the writer did, or why it did not say.
    pub writer: Result<WriterReport, WriterLost>,
    /// The last steps that failed, in order.
    pub failed: Vec<LastStepFailed>,
}

/// Why a recording's writer gave no report.
#[derive(Debug, thiserror::Error)]
pub enum WriterLost {
    /// It had not drained within the bound (its hops wait in the journal).
    #[error("the database did not take the last hops within {0:?}")]
    TimedOut(Duration),
    /// Its task ended without a report (it panicked).
    #[error(transparent)]
    Failed(tokio::task::JoinError),
}

/// A last step that failed: what it was doing, and the store's error.
#[derive(Debug, thiserror::Error)]
#[error("{doing}: {error:#}")]
pub struct LastStepFailed {
    pub(crate) doing: &'static str,
    pub error: StoreError,
}

#[cfg(test)]
#[path = "recording_tests.rs"]
mod tests;
