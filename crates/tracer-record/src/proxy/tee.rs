//! A pass-through body that keeps a bounded copy of what flows through it, with chunk timing,
//! and reports how the body ended (complete, broken, or dropped early) exactly once.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;

pub(crate) use super::tee_pieces::PieceOut;
use tracer_wire::hop::{BodyCapture, Chunk};
use tracer_wire::redact::BodyRedactor;
use tracer_wire::stream_end::{EndEvent, EndWatch};

/// The shared clock of one hop: a monotonic start and the wall time it corresponds to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HopClock {
    pub(crate) started: Instant,
    pub(crate) started_unix_ns: i64,
}

impl HopClock {
    pub(crate) fn start() -> Self {
        Self {
            started: Instant::now(),
            started_unix_ns: tracer_wire::hop::now_unix_ns(),
        }
    }

    /// Nanoseconds since the hop started.
    pub(crate) fn offset_ns(&self) -> i64 {
        i64::try_from(self.started.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    /// Wall time now, derived from the monotonic clock so offsets never go backwards.
    pub(crate) fn now_unix_ns(&self) -> i64 {
        self.started_unix_ns.saturating_add(self.offset_ns())
    }
}

/// How a body ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyOutcome {
    Complete,
    /// The body's source failed (e.g. the upstream closed mid-body).
    Broken(String),
    /// The body was dropped before its end: the reader went away.
    Dropped,
}

/// The part of a body nobody read, handed back when the tee is dropped early.
type Leftover = http_body_util::combinators::UnsyncBoxBody<Bytes, String>;

/// What the tee saw, sent when the body ends.
pub(crate) struct Captured {
    /// What was kept and not handed over in pieces (the tail, or the whole body when small);
    /// its total length and truncation flag are the whole body's.
    pub(crate) body: BodyCapture,
    /// Bytes kept and handed over in pieces before `body.bytes`.
    pub(crate) pieced: usize,
    pub(crate) outcome: BodyOutcome,
    pub(crate) chunks: Vec<Chunk>,
    pub(crate) chunks_truncated: bool,
    pub(crate) first_byte_unix_ns: Option<i64>,
    pub(crate) ended_unix_ns: i64,
    /// The trailer fields the body ended with (chunked bodies), as they came.
    pub(crate) trailers: Option<http::HeaderMap>,
    /// When the body was dropped before its end: the rest, still readable (e.g. to record a
    /// request whose upstream could not be reached).
    leftover: Option<Leftover>,
    /// The redactor the kept bytes went through, for the leftover read later.
    redactor: Option<BodyRedactor>,
    /// The end event its stream had passed, if any (of a compressed body: only when dropped
    /// early, when the kept capture is decoded to tell).
    pub(crate) end_event: Option<EndEvent>,
    /// What the body ended in the middle of (an SSE event), when it ended inside one.
    pub(crate) cut_inside: Option<&'static str>,
    /// The error the body broke off with after its stream's end event, when the tee ended it
    /// cleanly there instead (`end_cleanly_after_end_event`).
    pub(crate) broke_after_end: Option<String>,
}

impl Captured {
    fn empty() -> Self {
        Captured {
            body: BodyCapture::default(),
            pieced: 0,
            outcome: BodyOutcome::Complete,
            chunks: Vec::new(),
            chunks_truncated: false,
            first_byte_unix_ns: None,
            ended_unix_ns: 0,
            trailers: None,
            leftover: None,
            redactor: None,
            end_event: None,
            cut_inside: None,
            broke_after_end: None,
        }
    }

    /// Reads what nobody read of a dropped body into the capture (bounded, within `limit`).
    pub(crate) async fn read_leftover(&mut self, max_body: usize, limit: std::time::Duration) {
        use http_body_util::BodyExt;
        let Some(mut rest) = self.leftover.take() else {
            return;
        };
        let read = async {
            while let Some(Ok(frame)) = rest.frame().await {
                if let Some(data) = frame.data_ref() {
                    self.body.total_len += data.len() as u64;
                    let room = max_body.saturating_sub(self.pieced + self.body.bytes.len());
                    let keep = room.min(data.len());
                    match self.redactor.as_mut() {
                        Some(redactor) => redactor.feed(&data[..keep], &mut self.body.bytes),
                        None => self.body.bytes.extend_from_slice(&data[..keep]),
                    }
                    self.body.truncated |= keep < data.len();
                }
            }
            true
        };
        if tokio::time::timeout(limit, read).await.unwrap_or(false) {
            self.outcome = BodyOutcome::Complete;
        }
    }
}

pub(crate) struct TeeBody<B>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error,
{
    inner: Option<B>,
    clock: HopClock,
    max_body: usize,
    /// 0 means chunk timing is not kept (request bodies).
    max_chunks: usize,
    seen: Captured,
    /// Where the kept bytes go in pieces as they fill (None: they stay in the capture).
    pieces: Option<PieceOut>,
    /// What the kept copy goes through before it is kept (None: kept as it came).
    redactor: Option<BodyRedactor>,
    /// Watches every byte passed (kept or not) for the stream's end event.
    end_watch: Option<EndWatch>,
    /// A body that breaks off after its stream's end event ends cleanly instead.
    clean_end_after_event: bool,
    /// Told of the kept bytes as they pass (None: nobody is watching live).
    live: Option<super::live_tap::HopTap>,
    /// Called once, synchronously, when the body ends or is dropped.
    done: Option<Box<dyn FnOnce(Captured) + Send>>,
}

impl<B> TeeBody<B>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error,
{
    /// A tee that sends what it saw on a channel (for tests that await it).
    #[cfg(test)]
    pub(crate) fn new(
        inner: B,
        clock: HopClock,
        max_body: usize,
        max_chunks: usize,
    ) -> (Self, tokio::sync::oneshot::Receiver<Captured>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let tee = Self::with_callback(inner, clock, max_body, max_chunks, move |seen| {
            // The hop's finisher may be gone (shutdown cut it off); nothing else to tell.
            let _ = tx.send(seen);
        });
        (tee, rx)
    }

    /// A tee that hands what it saw to `done` the moment the body ends, before the last bytes
    /// reach the reader: whatever the reader does next is recorded after this.
    pub(crate) fn with_callback(
        inner: B,
        clock: HopClock,
        max_body: usize,
        max_chunks: usize,
        done: impl FnOnce(Captured) + Send + 'static,
    ) -> Self {
        TeeBody {
            inner: Some(inner),
            clock,
            max_body,
            max_chunks,
            seen: Captured::empty(),
            pieces: None,
            redactor: None,
            end_watch: None,
            clean_end_after_event: false,
            live: None,
            done: Some(Box::new(done)),
        }
    }

    /// Hands the kept bytes to `out` in pieces whenever they fill one, so a big body is never
    /// kept whole here.
    pub(crate) fn with_pieces(mut self, out: PieceOut) -> Self {
        self.pieces = Some(out);
        self
    }

    /// Keeps the copy redacted by `redactor` (the bytes passed on are never changed).
    pub(crate) fn with_redactor(mut self, redactor: Option<BodyRedactor>) -> Self {
        self.redactor = redactor;
        self
    }

    /// Tells `live` of the kept bytes (redacted as they are kept) as they pass.
    pub(crate) fn with_live(mut self, live: Option<super::live_tap::HopTap>) -> Self {
        self.live = live;
        self
    }

    /// Watches the body for its stream's end event (bounded state, whatever the body's size).
    pub(crate) fn with_end_watch(mut self, watch: Option<EndWatch>) -> Self {
        self.end_watch = watch;
        self
    }

    /// Ends the body cleanly when it breaks off after its stream's end event: the reader had
    /// the whole answer (only for a body whose reader is not counting bytes to a length).
    pub(crate) fn end_cleanly_after_end_event(mut self, yes: bool) -> Self {
        self.clean_end_after_event = yes;
        self
    }

    fn observe(&mut self, data: &Bytes) {
        if data.is_empty() {
            return;
        }
        if let Some(watch) = self.end_watch.as_mut() {
            watch.push(data);
        }
        let seen = &mut self.seen;
        if seen.first_byte_unix_ns.is_none() {
            seen.first_byte_unix_ns = Some(self.clock.now_unix_ns());
        }
        seen.body.total_len += data.len() as u64;
        let room = self
            .max_body
            .saturating_sub(seen.pieced + seen.body.bytes.len());
        let keep = room.min(data.len());
        let before = seen.body.bytes.len();
        match self.redactor.as_mut() {
            Some(redactor) => redactor.feed(&data[..keep], &mut seen.body.bytes),
            None => seen.body.bytes.extend_from_slice(&data[..keep]),
        }
        if let Some(live) = &self.live
            && seen.body.bytes.len() > before
        {
            live.tap
                .answer_bytes(&live.hop_id, &seen.body.bytes[before..]);
        }
        if keep < data.len() {
            seen.body.truncated = true;
        }
        if let Some(out) = self.pieces.as_mut()
            && seen.body.bytes.len() >= out.piece_bytes
        {
            if out.hand_over(&seen.body.bytes) {
                seen.pieced += seen.body.bytes.len();
                seen.body.bytes.clear();
            } else {
                // Not kept there: the rest stays here, after the pieces already handed over.
                self.pieces = None;
            }
        }
        if self.max_chunks > 0 {
            if seen.chunks.len() < self.max_chunks {
                seen.chunks.push(Chunk {
                    offset_ns: self.clock.offset_ns(),
                    size: data.len() as u64,
                });
            } else {
                seen.chunks_truncated = true;
            }
        }
    }

    fn finish(&mut self, outcome: BodyOutcome) {
        if let Some(done) = self.done.take() {
            let mut seen = std::mem::replace(&mut self.seen, Captured::empty());
            if outcome == BodyOutcome::Dropped {
                seen.leftover = self
                    .inner
                    .take()
                    .filter(|rest| !rest.is_end_stream())
                    .map(|rest| rest.map_err(|e| e.to_string()).boxed_unsync());
                seen.redactor = self.redactor.take();
            }
            if let Some(watch) = self.end_watch.take() {
                // A compressed body is read from its capture, when that is all of it and the
                // reader left early (a body that ended is not decoded again here).
                let whole =
                    (outcome == BodyOutcome::Dropped && seen.pieced == 0 && !seen.body.truncated)
                        .then_some(&seen.body);
                seen.cut_inside = watch.cut_inside();
                seen.end_event = watch.finish(whole);
            }
            seen.outcome = outcome;
            seen.ended_unix_ns = self.clock.now_unix_ns();
            done(seen);
        }
    }
}

impl<B> Body for TeeBody<B>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(&mut *inner).poll_frame(cx);
        let ended = inner.is_end_stream();
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.observe(data);
                }
                // Trailers are a body's last frame; hyper may drop the body right after them.
                if let Some(trailers) = frame.trailers_ref() {
                    this.seen.trailers = Some(trailers.clone());
                    this.finish(BodyOutcome::Complete);
                }
                // hyper may drop a body that says it has ended without polling it again.
                if ended {
                    this.finish(BodyOutcome::Complete);
                }
            }
            Poll::Ready(Some(Err(error))) => {
                let past_end = this.clean_end_after_event
                    && this
                        .end_watch
                        .as_ref()
                        .is_some_and(|watch| watch.reached(None).is_some());
                if past_end {
                    this.seen.broke_after_end = Some(error_chain(error));
                    this.finish(BodyOutcome::Complete);
                    this.inner = None;
                    return Poll::Ready(None);
                }
                this.finish(BodyOutcome::Broken(error_chain(error)));
            }
            Poll::Ready(None) => this.finish(BodyOutcome::Complete),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(B::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), B::size_hint)
    }
}

impl<B> Drop for TeeBody<B>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error,
{
    fn drop(&mut self) {
        self.finish(BodyOutcome::Dropped);
    }
}

/// An error and its causes, one after another ("error reading a body from connection: end of
/// file before message length reached").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let words = cause.to_string();
        if !text.ends_with(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
        source = cause.source();
    }
    text
}

/// An empty body that was never polled is complete, not dropped: the caller checks this.
pub(crate) fn settle_unpolled(captured: Captured, was_empty: bool) -> Captured {
    if was_empty && captured.outcome == BodyOutcome::Dropped && captured.body.total_len == 0 {
        Captured {
            outcome: BodyOutcome::Complete,
            ..captured
        }
    } else {
        captured
    }
}

#[cfg(test)]
mod tests;
