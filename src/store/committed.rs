//! What the writer hands a live reader as it writes hops: each hop's start with its end, or with
//! what is known while it is in flight, as its row will read, so live grouping takes its facts
//! without reading the row back. The starts of hops still in flight are kept (bounded) until
//! their ends come in a later batch.

use std::collections::{HashMap, VecDeque};

use crate::hop::{BodyCapture, HopEnd, HopEvent, HopStart, HopState, RequestDone};

/// Told of hops as the writer writes them (inside the batch's transaction, before it commits, so
/// a row is never visible before its hop was handed over). A batch that fails is handed over
/// again when it is retried.
pub trait CommittedHops: Send + Sync + std::fmt::Debug {
    /// A hop as its row reads once this batch is written: `end.state` is `InFlight` (with the
    /// request when it has been read) or how it ended. Called on the writer's task: be quick.
    fn hop(&self, start: &HopStart, end: &HopEnd);
}

/// Starts of hops in flight kept at most (the oldest are forgotten: their rows are read back).
const MAX_OPEN: usize = 8192;

/// The starts of hops written in flight, for their ends to come.
#[derive(Debug, Default)]
pub struct OpenStarts {
    by_id: HashMap<String, HopStart>,
    order: VecDeque<String>,
}

impl OpenStarts {
    fn keep(&mut self, start: &HopStart) {
        if self.by_id.insert(start.id.clone(), start.clone()).is_none() {
            self.order.push_back(start.id.clone());
        }
        while self.by_id.len() > MAX_OPEN || self.order.len() > 2 * MAX_OPEN {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.by_id.remove(&oldest);
        }
    }
}

/// Whether a body is held whole (not truncated, not in pieces).
fn whole(body: &BodyCapture) -> bool {
    !body.truncated && body.bytes.len() as u64 == body.total_len
}

/// Whether an end's row holds nothing the end does not: both bodies whole, no WebSocket
/// messages (kept elsewhere).
pub fn is_whole(end: &HopEnd) -> bool {
    end.websocket.is_none() && whole(&end.request_body) && whole(&end.response_body)
}

/// Where each hop's events sit in a batch.
#[derive(Default)]
struct Seen {
    start: Option<usize>,
    request: Option<usize>,
    end: Option<usize>,
}

/// Hands `hand` every hop the batch's events write, as its row will read.
pub(super) fn hand_over(hand: &dyn CommittedHops, open: &mut OpenStarts, events: &mut [HopEvent]) {
    let mut seen: HashMap<String, Seen> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (at, event) in events.iter().enumerate() {
        let (id, slot) = match event {
            HopEvent::Started(start) => (&start.id, 0),
            HopEvent::RequestDone(done) => (&done.id, 1),
            HopEvent::Ended(end) => (&end.id, 2),
            _ => continue,
        };
        let entry = seen.entry(id.clone()).or_insert_with(|| {
            order.push(id.clone());
            Seen::default()
        });
        match slot {
            0 => entry.start = Some(at),
            1 => entry.request = Some(at),
            _ => entry.end = Some(at),
        }
    }
    for id in order {
        let Some(places) = seen.remove(&id) else {
            continue;
        };
        let started = places.start.and_then(|at| match &events[at] {
            HopEvent::Started(start) => Some(start.as_ref()),
            _ => None,
        });
        if let Some(at) = places.end {
            let HopEvent::Ended(end) = &events[at] else {
                continue;
            };
            let kept = open.by_id.remove(&id);
            if let Some(start) = started.or(kept.as_ref())
                && is_whole(end)
            {
                hand.hop(start, end);
            }
            continue;
        }
        if let Some(start) = started {
            open.keep(start);
        }
        let Some(start) = open.by_id.get(&id) else {
            continue;
        };
        let request = places.request.and_then(|at| match &mut events[at] {
            HopEvent::RequestDone(done) => Some(done.as_mut()),
            _ => None,
        });
        in_flight(hand, start, request);
    }
}

/// Hands over a hop in flight, its request body lent to the end it is read with.
fn in_flight(hand: &dyn CommittedHops, start: &HopStart, request: Option<&mut RequestDone>) {
    let mut end = HopEnd {
        id: start.id.clone(),
        state: Some(HopState::InFlight),
        ..HopEnd::default()
    };
    match request {
        None => hand.hop(start, &end),
        Some(done) if whole(&done.request_body) => {
            end.request_body = std::mem::take(&mut done.request_body);
            end.request_ended_unix_ns = Some(done.request_ended_unix_ns);
            hand.hop(start, &end);
            done.request_body = std::mem::take(&mut end.request_body);
        }
        Some(_) => {}
    }
}
