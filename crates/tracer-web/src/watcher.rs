//! What changed in the database, as events: every poll reads the marks of the hops stored since
//! the last one and of the hops still moving (in flight, not yet grouped, lately regrouped), and
//! publishes a `hop` event for each that came or changed and a `trace` event (its listing entry)
//! for each trace they touched. Standalone, it also groups what nobody grouped.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::api::Shared;
use crate::options::Watch;
use tracer_export::listing::{trace_entry, with_sessions};
use tracer_live::live_group::LiveGrouping;
use tracer_store::browse::HopMark;
use tracer_store::{Result, StoreError};

/// How often the database is read: a hop shows on the page well within half a second.
pub(crate) const POLL: Duration = Duration::from_millis(200);
/// How long a settled hop is still watched (grouping may move it to another trace).
const SETTLING: Duration = Duration::from_secs(10);
/// Hops watched at most; beyond, the longest settled are let go of.
const WATCHED: usize = 10_000;
/// A trace's listing entry is computed at most this often while it keeps changing.
const ENTRY_EVERY: Duration = Duration::from_secs(1);
/// Marks read per poll at most (the rest next poll).
const MARKS: i64 = 5_000;

/// Where one hop stood when last seen, and since when it has been settled.
struct Seen {
    trace_id: Option<String>,
    state: String,
    settled: Option<Instant>,
}

/// The watcher's memory between polls.
pub(crate) struct Watcher {
    mode: Watch,
    last_seq: i64,
    /// The newest agent event seen: more published as one `agent` event per poll.
    last_agent_event: i64,
    seen: HashMap<String, Seen>,
    /// Traces changed whose entry waits for `ENTRY_EVERY` to pass, and when each was last sent.
    due: HashSet<String>,
    sent: HashMap<String, Instant>,
    grouping: LiveGrouping,
}

impl Watcher {
    /// A watcher that starts from what is stored now (history is the listing's, not events).
    pub(crate) async fn start(shared: &Shared, mode: Watch) -> Result<Watcher> {
        let last_seq = shared.store.newest_seq().await?;
        let last_agent_event = shared.store.newest_agent_event_id().await?;
        Ok(Watcher {
            mode,
            last_seq,
            last_agent_event,
            seen: HashMap::new(),
            due: HashSet::new(),
            sent: HashMap::new(),
            grouping: LiveGrouping::new(),
        })
    }

    /// One poll: group (standalone), read the marks, publish what changed.
    pub(crate) async fn poll(&mut self, shared: &Shared) -> Result<()> {
        if self.mode == Watch::PollAndGroup
            && shared.store.earliest_unassigned_start().await?.is_some()
        {
            self.grouping.pass(&shared.store).await?;
        }
        let moving: Vec<String> = self.seen.keys().cloned().collect();
        let marks = shared
            .store
            .hop_marks(self.last_seq, &moving, MARKS)
            .await?;
        let now = Instant::now();
        for mark in marks {
            self.last_seq = self.last_seq.max(mark.seq);
            self.note(shared, mark, now);
        }
        self.let_go(now);
        let newest = shared.store.newest_agent_event_id().await?;
        if newest > self.last_agent_event {
            let data = json!({"from": self.last_agent_event + 1, "to": newest});
            shared.hub.publish("agent", data.to_string());
            self.last_agent_event = newest;
        }
        self.send_due(shared, now).await
    }

    /// Publishes a hop that came or changed, and marks the traces it touched as due.
    fn note(&mut self, shared: &Shared, mark: HopMark, now: Instant) {
        let settled_now = mark.state != "in_flight" && mark.trace_id.is_some();
        match self.seen.get_mut(&mark.id) {
            Some(seen) if seen.trace_id == mark.trace_id && seen.state == mark.state => {
                return;
            }
            Some(seen) => {
                if let Some(old) = seen
                    .trace_id
                    .take()
                    .filter(|old| Some(old) != mark.trace_id.as_ref())
                {
                    self.due.insert(old);
                }
                seen.trace_id = mark.trace_id.clone();
                seen.state = mark.state.clone();
                seen.settled = settled_now.then_some(now);
            }
            None => {
                self.seen.insert(
                    mark.id.clone(),
                    Seen {
                        trace_id: mark.trace_id.clone(),
                        state: mark.state.clone(),
                        settled: settled_now.then_some(now),
                    },
                );
            }
        }
        let data = json!({"hop_id": mark.id, "trace_id": mark.trace_id, "state": mark.state});
        shared.hub.publish("hop", data.to_string());
        if let Some(trace) = mark.trace_id {
            self.due.insert(trace);
        }
    }

    /// Stops watching hops settled for long enough, and the oldest when too many are watched.
    fn let_go(&mut self, now: Instant) {
        self.seen.retain(|_, seen| {
            seen.settled
                .is_none_or(|at| now.duration_since(at) < SETTLING)
        });
        if self.seen.len() > WATCHED {
            let mut settled: Vec<(Instant, String)> = self
                .seen
                .iter()
                .filter_map(|(id, seen)| seen.settled.map(|at| (at, id.clone())))
                .collect();
            settled.sort();
            for (_, id) in settled.into_iter().take(self.seen.len() - WATCHED) {
                self.seen.remove(&id);
            }
        }
        self.sent
            .retain(|_, at| now.duration_since(*at) < ENTRY_EVERY);
    }

    /// Sends the listing entry of each due trace not sent within `ENTRY_EVERY`.
    async fn send_due(&mut self, shared: &Shared, now: Instant) -> Result<()> {
        let ready: Vec<String> = self
            .due
            .iter()
            .filter(|id| !self.sent.contains_key(*id))
            .cloned()
            .collect();
        for id in ready {
            self.due.remove(&id);
            self.sent.insert(id.clone(), now);
            shared.cache.forget(&id).await;
            let row = match shared.store.trace(&id).await {
                Ok(row) => row,
                // Regrouped away: the page's list is stale as a whole.
                Err(StoreError::UnknownTrace(_)) => {
                    shared.hub.publish("reset", "{}".into());
                    continue;
                }
                Err(error) => return Err(error),
            };
            let mut entries = [trace_entry(&shared.store, row).await?];
            with_sessions(&shared.store, &mut entries).await?;
            if let Ok(data) = serde_json::to_string(&entries[0]) {
                shared.hub.publish("trace", data);
            }
        }
        Ok(())
    }
}
