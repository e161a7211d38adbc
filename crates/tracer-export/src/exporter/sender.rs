//! The sending half of the live exporter: takes spans from the bounded queue, sends them in
//! batches (retrying as the OTLP spec allows), and records in the store what was delivered and
//! what was not.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use super::client::OtlpClient;
use crate::otlp::Span;
use tracer_store::Store;
use tracer_store::exports::SpanKey;

/// How long the first span of a batch waits for others to join it.
const LINGER: Duration = Duration::from_millis(200);

/// What the exporter delivered and could not deliver, as it goes.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) sent: AtomicU64,
    pub(crate) not_exported: AtomicU64,
    /// Spans put in the queue, and those of them whose outcome the sender has counted: the
    /// difference is what a sender stopped midway never got to count.
    pub(crate) queued: AtomicU64,
    pub(crate) settled: AtomicU64,
}

impl Tally {
    pub(crate) fn add_queued(&self, n: usize) {
        self.queued.fetch_add(n as u64, Ordering::Relaxed);
    }

    fn add_settled(&self, n: usize) {
        self.settled.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Queued spans the sender has not counted as sent or not exported.
    pub(crate) fn unsettled(&self) -> u64 {
        let settled = self.settled.load(Ordering::Relaxed);
        self.queued.load(Ordering::Relaxed).saturating_sub(settled)
    }

    fn add_sent(&self, n: usize) {
        self.sent.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub(crate) fn add_not_exported(&self, n: usize) {
        self.not_exported.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// The key of a span in `otlp_spans`.
pub(crate) fn key_of(span: &Span, trace_id: &str) -> SpanKey {
    SpanKey {
        trace_id: trace_id.to_string(),
        span_id: span.span_id.clone(),
        hop_id: span.hop_id.clone(),
    }
}

/// A span waiting in the queue, with tracer's trace id (the table's key).
#[derive(Debug)]
pub(crate) struct Queued {
    pub(crate) trace_id: String,
    pub(crate) span: Span,
}

/// Sends batches until the queue is closed and drained.
pub(crate) async fn run(
    mut queue: mpsc::Receiver<Queued>,
    client: OtlpClient,
    store: Store,
    tally: Arc<Tally>,
    mut deadline: watch::Receiver<Option<Instant>>,
) {
    let batch_size = client.config().batch;
    while let Some(first) = queue.recv().await {
        let mut batch = vec![first];
        let linger = tokio::time::sleep(LINGER);
        tokio::pin!(linger);
        while batch.len() < batch_size {
            tokio::select! {
                next = queue.recv() => match next {
                    Some(span) => batch.push(span),
                    None => break,
                },
                _ = &mut linger => break,
            }
        }
        send_batch(&client, &store, &tally, &batch, &mut deadline).await;
    }
}

/// Sends one batch and records the outcome.
pub(crate) async fn send_batch(
    client: &OtlpClient,
    store: &Store,
    tally: &Tally,
    batch: &[Queued],
    deadline: &mut watch::Receiver<Option<Instant>>,
) -> bool {
    let target = client.config().url.clone();
    let spans: Vec<Span> = batch.iter().map(|q| q.span.clone()).collect();
    let keys: Vec<SpanKey> = batch.iter().map(|q| key_of(&q.span, &q.trace_id)).collect();
    let body = client.body(&client.config().resource, &spans);
    // The tally is taken before the store is written: a sender stopped during a write still
    // counted what the receiver did.
    match client.deliver(body, deadline).await {
        Ok(rejected) => {
            let refused = rejected.as_ref().map_or(0, |(count, message)| {
                tracing::warn!(count, %message, %target, "the OTLP receiver rejected spans");
                usize::try_from(*count).unwrap_or(0).min(keys.len())
            });
            tally.add_not_exported(refused);
            tally.add_sent(keys.len() - refused);
            tally.add_settled(keys.len());
            if let Err(error) = store.mark_spans_sent(&target, &keys).await {
                tracing::warn!(%error, "recording exported spans");
            }
            if refused > 0
                && let Err(error) = store
                    .add_to_counter(tracer_store::exports::SPANS_NOT_EXPORTED, refused as i64)
                    .await
            {
                tracing::warn!(%error, "counting rejected spans");
            }
            true
        }
        Err(reason) => {
            tracing::warn!(%reason, spans = keys.len(), %target, "OTLP export failed");
            tally.add_not_exported(keys.len());
            tally.add_settled(keys.len());
            if let Err(error) = store.mark_spans_failed(&target, &keys, &reason).await {
                tracing::warn!(%error, "recording spans not exported");
            }
            false
        }
    }
}
