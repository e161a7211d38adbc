//! The live events a page follows: numbered, the last [`RING`] kept for a page that reconnects
//! (`Last-Event-ID`), sent to each page over Server-Sent Events. Publishing never waits: a page
//! too slow to keep up is told to `reset` (refetch) instead of holding anything up.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use tokio::sync::broadcast;

/// Events kept for a page that reconnects; also each page's backlog before it must reset.
pub(crate) const RING: usize = 1024;
/// A comment sent when nothing else was, so proxies and browsers keep the stream open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One event: `trace`, `hop`, `stream` or `reset`, its JSON, and its place.
#[derive(Debug)]
pub(crate) struct Event {
    id: u64,
    kind: &'static str,
    data: String,
}

/// Where events are published and followed; cheap to clone.
#[derive(Clone)]
pub(crate) struct EventHub {
    inner: Arc<Inner>,
}

struct Inner {
    /// This server's run: event ids of another run (a restart) mean nothing here.
    epoch: String,
    ring: Mutex<Ring>,
    sender: broadcast::Sender<Arc<Event>>,
    /// Set when the server stops: every page's stream ends.
    closed: tokio::sync::watch::Sender<bool>,
}

struct Ring {
    next_id: u64,
    events: VecDeque<Arc<Event>>,
}

/// What a page that (re)connects gets first.
enum Start {
    /// The events after the one it last had.
    Missed(Vec<Arc<Event>>),
    /// It missed more than is kept, or comes from another run: it must refetch.
    Reset,
}

impl EventHub {
    pub(crate) fn new() -> EventHub {
        let (sender, _) = broadcast::channel(RING);
        let epoch = format!("{:x}", tracer_wire::hop::now_unix_ns());
        EventHub {
            inner: Arc::new(Inner {
                epoch,
                ring: Mutex::new(Ring {
                    next_id: 1,
                    events: VecDeque::with_capacity(RING),
                }),
                sender,
                closed: tokio::sync::watch::Sender::new(false),
            }),
        }
    }

    /// Publishes an event (its data already JSON); never waits.
    pub(crate) fn publish(&self, kind: &'static str, data: String) {
        let mut ring = self
            .inner
            .ring
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let event = Arc::new(Event {
            id: ring.next_id,
            kind,
            data,
        });
        ring.next_id += 1;
        if ring.events.len() == RING {
            ring.events.pop_front();
        }
        ring.events.push_back(event.clone());
        // Sent under the lock, so a page subscribing now sees each event once, in order. No
        // page listening is no error.
        let _ = self.inner.sender.send(event);
    }

    /// Ends every page's stream (the server is stopping).
    pub(crate) fn close(&self) {
        self.inner.closed.send_replace(true);
    }

    /// Whether any page is following (a recording need not copy bytes for nobody).
    pub(crate) fn followed(&self) -> bool {
        self.inner.sender.receiver_count() > 0
    }

    /// The id a page sees: this run's epoch and the event's number.
    fn wire_id(&self, id: u64) -> String {
        format!("{}-{id}", self.inner.epoch)
    }

    /// A page's subscription: what it missed since `last_event_id` (or a reset), then the rest.
    fn subscribe(&self, last_event_id: Option<&str>) -> (Start, broadcast::Receiver<Arc<Event>>) {
        let ring = self
            .inner
            .ring
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let receiver = self.inner.sender.subscribe();
        let Some(last) = last_event_id else {
            return (Start::Missed(Vec::new()), receiver);
        };
        let number = last
            .strip_prefix(&self.inner.epoch)
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|n| n.parse::<u64>().ok());
        let oldest = ring.events.front().map_or(ring.next_id, |e| e.id);
        let start = match number {
            Some(n) if n < ring.next_id && n + 1 >= oldest => {
                Start::Missed(ring.events.iter().filter(|e| e.id > n).cloned().collect())
            }
            _ => Start::Reset,
        };
        (start, receiver)
    }

    /// The SSE response for a page that last had `last_event_id`.
    pub(crate) fn sse(
        &self,
        last_event_id: Option<&str>,
    ) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>> + use<>> {
        let (start, receiver) = self.subscribe(last_event_id);
        let hub = self.clone();
        let first: Vec<SseEvent> = match start {
            Start::Missed(events) => events.iter().map(|e| hub.sse_event(e)).collect(),
            Start::Reset => vec![hub.reset_event()],
        };
        let closed = self.inner.closed.subscribe();
        let state = (hub, receiver, closed);
        let rest =
            futures_util::stream::unfold(state, |(hub, mut receiver, mut closed)| async move {
                if *closed.borrow() {
                    return None;
                }
                let received = tokio::select! {
                    received = receiver.recv() => received,
                    _ = closed.changed() => return None,
                };
                let event = match received {
                    Ok(event) => hub.sse_event(&event),
                    // Too slow: what it missed is gone from the channel; it refetches.
                    Err(broadcast::error::RecvError::Lagged(_)) => hub.reset_event(),
                    Err(broadcast::error::RecvError::Closed) => return None,
                };
                Some((Ok(event), (hub, receiver, closed)))
            });
        let stream = futures_util::StreamExt::chain(
            futures_util::stream::iter(first.into_iter().map(Ok)),
            rest,
        );
        Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
    }

    fn sse_event(&self, event: &Event) -> SseEvent {
        SseEvent::default()
            .id(self.wire_id(event.id))
            .event(event.kind)
            .data(&event.data)
    }

    /// `reset`, carrying the newest id so the next reconnect resumes from here.
    fn reset_event(&self) -> SseEvent {
        let ring = self
            .inner
            .ring
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let newest = ring.next_id.saturating_sub(1);
        drop(ring);
        SseEvent::default()
            .id(self.wire_id(newest))
            .event("reset")
            .data("{}")
    }
}

#[cfg(test)]
impl EventHub {
    /// A bare subscription (the tests of what is published).
    pub(crate) fn inner_subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.inner.sender.subscribe()
    }
}

#[cfg(test)]
impl Event {
    pub(crate) fn data_for_tests(&self) -> &str {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(start: &Start) -> Option<Vec<u64>> {
        match start {
            Start::Missed(events) => Some(events.iter().map(|e| e.id).collect()),
            Start::Reset => None,
        }
    }

    #[test]
    fn a_page_that_reconnects_gets_what_it_missed_or_a_reset() {
        let hub = EventHub::new();
        for n in 0..5 {
            hub.publish("hop", format!("{{\"n\":{n}}}"));
        }
        let id = |n: u64| hub.wire_id(n);
        assert_eq!(numbers(&hub.subscribe(Some(&id(3))).0), Some(vec![4, 5]));
        assert_eq!(numbers(&hub.subscribe(Some(&id(5))).0), Some(vec![]));
        assert_eq!(numbers(&hub.subscribe(None).0), Some(vec![]));
        // Another run's id, or one from the future: refetch.
        assert_eq!(numbers(&hub.subscribe(Some("0-3")).0), None);
        assert_eq!(numbers(&hub.subscribe(Some(&id(9))).0), None);
        // More missed than is kept: refetch.
        for n in 0..RING {
            hub.publish("hop", format!("{{\"n\":{n}}}"));
        }
        assert_eq!(numbers(&hub.subscribe(Some(&id(2))).0), None);
        let kept = numbers(&hub.subscribe(Some(&id(6))).0).unwrap();
        assert_eq!(kept.len(), RING - 1);
    }

    #[test]
    fn publishing_never_waits_for_a_page_that_does_not_read() {
        let hub = EventHub::new();
        let (_, receiver) = hub.subscribe(None);
        assert!(hub.followed());
        for n in 0..(RING * 3) {
            hub.publish("stream", format!("{n}"));
        }
        drop(receiver);
        assert!(!hub.followed());
    }
}
