//! A later live grouping pass's reading: the marks of new, queued and unfinished hops, each
//! hop's input taken from the queue or from what the store writer handed over, and only the
//! others read whole, a chunk at a time.

use std::collections::HashMap;

use futures_util::TryStreamExt;

use super::super::feed::SeenHop;
use super::super::group::Grouper;
use super::super::live_facts::Version;
use super::{LiveGrouping, Pass};
use crate::hop::HopState;
use crate::store::hop_marks::HopMark;
use crate::store::{Result, Store};

/// Marks a later pass resolves at once (what is known, and one query for the rest).
const MARKS_PER_READ: usize = 256;

/// What a later pass knows of a hop without reading its row.
enum Known {
    /// Queued as it is now.
    Queued,
    /// Handed over by the store writer.
    Handed(Box<SeenHop>),
    /// Its row must be read.
    Missing,
}

impl LiveGrouping {
    /// A later pass: hops stored since the last, and those whose request or end was awaited.
    /// Their marks are read first; a hop's whole row only when neither the queue nor the
    /// writer's facts already hold it as it is now.
    pub(super) async fn read_new(
        &mut self,
        store: &Store,
        grouper: &mut Grouper,
        pass: &mut Pass,
    ) -> Result<()> {
        // Queued hops are read again too: each is fed as it is when it is released.
        let again: Vec<i64> = self
            .queue
            .values()
            .map(|queued| queued.seq)
            .chain(self.unfinished.keys().copied())
            .collect();
        let marks = store.hop_marks_after_seq(self.cursor, &again).await?;
        let mut kinds_read = false;
        // A chunk at a time: what is known of each, the rest read in one query, then fed in
        // start order (so a pass never holds more than a chunk of inputs not yet queued).
        for chunk in marks.chunks(MARKS_PER_READ) {
            let known: Vec<Known> = chunk.iter().map(|mark| self.known(mark)).collect();
            let missing: Vec<i64> = chunk
                .iter()
                .zip(&known)
                .filter(|(_, known)| matches!(known, Known::Missing))
                .map(|(mark, _)| mark.seq)
                .collect();
            let mut read: HashMap<i64, SeenHop> = HashMap::with_capacity(missing.len());
            if !missing.is_empty() {
                let mut rows = std::pin::pin!(store.hops_by_seq_for_grouping(&missing));
                while let Some(stored) = rows.try_next().await? {
                    read.insert(stored.seq, SeenHop::from(stored));
                }
                self.rows_read += read.len() as u64;
            }
            for (mark, known) in chunk.iter().zip(known) {
                let seen = match known {
                    Known::Queued => {
                        self.take_queued(grouper, mark, pass);
                        continue;
                    }
                    Known::Handed(seen) => *seen,
                    Known::Missing => match read.remove(&mark.seq) {
                        Some(seen) => seen,
                        None => continue,
                    },
                };
                // A trace another process made: its kind, read once a pass at most.
                if let Some(trace) = &seen.trace_id
                    && !kinds_read
                    && !self.unfinished.contains_key(&seen.seq)
                    && !self.kinds.contains_key(trace)
                    && !grouper.knows(trace)
                {
                    self.kinds = store.trace_places().await?;
                    kinds_read = true;
                }
                self.take(grouper, seen, pass);
            }
        }
        Ok(())
    }

    /// A hop read again that is queued as it is now: the queue releases what it can up to it.
    fn take_queued(&mut self, grouper: &mut Grouper, mark: &HopMark, pass: &mut Pass) {
        self.cursor = self.cursor.max(mark.seq);
        self.clock = self.clock.max(mark.started_unix_ns);
        self.release(grouper, pass, Some((mark.started_unix_ns, mark.seq)));
    }

    /// A hop as it is now without reading its row: still queued as it was read when finished,
    /// or handed over by the writer as its row reads now.
    fn known(&mut self, mark: &HopMark) -> Known {
        let key = (mark.started_unix_ns, mark.seq);
        let in_flight = mark.state == HopState::InFlight;
        if let Some(queued) = self.queue.get(&key)
            && !in_flight
            && queued.request_read
            && queued.input.ended_ns.is_some()
            && queued.trace_id == mark.trace_id
        {
            return Known::Queued;
        }
        let version = match in_flight {
            true => Version::InFlight {
                request_read: mark.request_ended_unix_ns.is_some(),
            },
            false => Version::Ended,
        };
        let Some(input) = self.facts.as_ref().and_then(|f| f.take(&mark.id, version)) else {
            return Known::Missing;
        };
        Known::Handed(Box::new(SeenHop {
            seq: mark.seq,
            trace_id: mark.trace_id.clone(),
            request_read: !in_flight || mark.request_ended_unix_ns.is_some(),
            input,
        }))
    }
}
