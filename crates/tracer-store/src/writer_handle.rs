//! The handles that feed the writer: every hop event is appended to the journal (a hop's start
//! and request held for the frame that ends it), never waiting on SQLite; a hop that cannot be
//! journaled is counted.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::writer::{MAX_LOST_ENDS, Shared};
use tracer_wire::hop::{HopEnd, HopEvent, HopSink, HopStart, RequestDone, ServerLogLine};

/// The sending side, cloned into every connection task. Sending never waits on SQLite.
#[derive(Debug)]
pub struct RecorderHandle {
    pub(super) shared: Arc<Shared>,
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
        let held = self.shared.journal.hold_encoded(|frame| {
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
                self.shared.journal_failed(&error);
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
    pub(crate) fn journal_path(&self) -> std::path::PathBuf {
        self.shared.journal.path().to_path_buf()
    }
}
