//! The watching half of the live exporter: finds traces whose grouping has settled (every hop
//! ended, the last one at least the delay ago), builds their spans with the one span builder,
//! claims those not sent yet and queues them; a full queue counts them as not exported.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use super::sender::{Queued, Tally, key_of};
use crate::body_text::TraceToExport;
use crate::hop_log::SessionEntry;
use crate::otlp::{Span, SpanOptions, trace_spans};
use tracer_live::correlate::{LOOKBACK_NS, group_new_hops};
use tracer_store::exports::SpanKey;
use tracer_store::{Result, Store};
use tracer_trace::RecordedHop;
use tracer_wire::hop::{HopState, now_unix_ns};

/// How far behind now the scan always looks, for hops the writer stores late.
const MARGIN_NS: i64 = 60 * 1_000_000_000;

/// What a scan looks at and where it puts what it finds.
pub(crate) struct Watcher {
    pub(crate) store: Store,
    /// The receiver's traces URL (the `otlp_spans.target`).
    pub(crate) target: String,
    pub(crate) options: SpanOptions,
    /// Group new hops before each scan (for `tracer wrap`, which runs no grouping of its own).
    pub(crate) group_first: bool,
    pub(crate) queue: mpsc::Sender<Queued>,
    pub(crate) tally: Arc<Tally>,
    /// Hops started before this are not looked at (it only moves forward).
    pub(crate) low_ns: i64,
}

/// What the scan knows of one trace's unexported hops.
#[derive(Debug, Default)]
struct Pending {
    in_flight: bool,
    last_end: i64,
    first_start: i64,
}

impl Watcher {
    /// Queues the spans of every trace settled before `settled_before_ns`; returns how many.
    pub(crate) async fn scan(&mut self, settled_before_ns: i64) -> Result<usize> {
        if self.group_first {
            group_new_hops(&self.store).await?;
        }
        let now = now_unix_ns();
        let stale = now - LOOKBACK_NS;
        let hops = self
            .store
            .unexported_hops(&self.target, self.low_ns)
            .await?;
        let mut low = now - MARGIN_NS;
        let mut traces: HashMap<String, Pending> = HashMap::new();
        for hop in hops {
            let in_flight = hop.state == HopState::InFlight.as_str();
            if in_flight && hop.started_unix_ns < stale {
                continue; // grouping no longer waits for it either
            }
            let Some(trace_id) = hop.trace_id else {
                low = low.min(hop.started_unix_ns);
                continue;
            };
            let pending = traces.entry(trace_id).or_insert(Pending {
                first_start: i64::MAX,
                ..Pending::default()
            });
            pending.in_flight |= in_flight;
            pending.last_end = pending.last_end.max(hop.ended_unix_ns);
            pending.first_start = pending.first_start.min(hop.started_unix_ns);
        }
        let mut queued = 0;
        for (trace_id, pending) in traces {
            if pending.in_flight || pending.last_end > settled_before_ns {
                low = low.min(pending.first_start);
                continue;
            }
            match self.export_trace(&trace_id, stale).await {
                Ok(Some(n)) => queued += n,
                // A hop of the trace outside the scan (started earlier) is still in flight.
                Ok(None) => low = low.min(pending.first_start),
                Err(error) => {
                    tracing::warn!(%error, trace = %trace_id, "building spans to export");
                    low = low.min(pending.first_start);
                }
            }
        }
        self.low_ns = self.low_ns.max(low);
        Ok(queued)
    }

    /// Claims and queues the spans of one trace not sent to this receiver yet; None when one of
    /// its hops (started since `stale_ns`) is still in flight.
    async fn export_trace(&self, trace_id: &str, stale_ns: i64) -> Result<Option<usize>> {
        let hops = tracer_live::load::hops_as_recorded(&self.store, trace_id).await?;
        let in_flight = |h: &RecordedHop| {
            h.start.started_unix_ns >= stale_ns
                && h.end.as_ref().and_then(|e| e.state) == Some(HopState::InFlight)
        };
        if hops.iter().any(in_flight) {
            return Ok(None);
        }
        let title = self.store.trace(trace_id).await.ok().and_then(|t| t.title);
        let session = self.store.session_of_trace(trace_id).await?;
        let session = session.as_ref().map(SessionEntry::of);
        let view = TraceToExport {
            fetch: None,
            id: trace_id,
            title: title.as_deref(),
            hops: &hops,
            session: session.as_ref(),
            agent_events: &[],
        };
        let spans = ended_spans(trace_spans(&view, self.options), &hops);
        let keys: Vec<SpanKey> = spans.iter().map(|s| key_of(s, trace_id)).collect();
        let claimed = self.store.claim_spans(&self.target, &keys, false).await?;
        let mut dropped = Vec::new();
        let mut queued = 0;
        for ((span, key), took) in spans.into_iter().zip(keys).zip(claimed) {
            if !took {
                continue;
            }
            let item = Queued {
                trace_id: trace_id.to_string(),
                span,
            };
            match self.queue.try_send(item) {
                Ok(()) => {
                    self.tally.add_queued(1);
                    queued += 1;
                }
                Err(TrySendError::Full(_) | TrySendError::Closed(_)) => dropped.push(key),
            }
        }
        if !dropped.is_empty() {
            tracing::warn!(
                spans = dropped.len(),
                "the OTLP export queue is full: spans not exported"
            );
            self.tally.add_not_exported(dropped.len());
            self.store
                .mark_spans_failed(&self.target, &dropped, "the export queue was full")
                .await?;
        }
        Ok(Some(queued))
    }
}

/// The spans whose hop has ended (a synthesized root has no hop and is kept).
pub(crate) fn ended_spans(spans: Vec<Span>, hops: &[RecordedHop]) -> Vec<Span> {
    let in_flight: Vec<&str> = hops
        .iter()
        .filter(|h| {
            h.end
                .as_ref()
                .is_none_or(|e| e.state.is_none_or(|s| s == HopState::InFlight))
        })
        .map(|h| h.start.id.as_str())
        .collect();
    spans
        .into_iter()
        .filter(|s| {
            s.hop_id
                .as_deref()
                .is_none_or(|id| !in_flight.contains(&id))
        })
        .collect()
}
