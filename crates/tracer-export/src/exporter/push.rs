//! `tracer export --push`: sends recorded traces to an OTLP receiver now, in batches, skipping
//! the spans that receiver already has and taking again the ones that failed before.

use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::watch;

use super::client::OtlpClient;
use super::config::{OtlpConfig, traces_url_of};
use super::sender::{Queued, Tally, key_of, send_batch};
use super::watch::ended_spans;
use crate::body_text::TraceToExport;
use crate::otlp::trace_spans;
use tracer_store::exports::SpanKey;
use tracer_store::{Result, Store};

/// The command that sends again what `target` (a traces URL, as `otlp_spans` holds it) did not
/// get: `--push BASE` when appending `/v1/traces` to a base gives the target back, else
/// `--push-traces-url TARGET`, used as given, as the live exporter used it.
pub fn push_command(target: &str) -> String {
    let how = match target.strip_suffix("/v1/traces") {
        Some(base) if !base.is_empty() && traces_url_of(base) == target => format!("--push {base}"),
        _ => format!("--push-traces-url {target}"),
    };
    format!("tracer export --all --format otlp {how}")
}

/// How long one batch of a push is retried.
const PUSH_RETRY_FOR: Duration = Duration::from_secs(15);

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    pub(crate) url: String,
    pub(crate) sent: u64,
    pub not_exported: u64,
    /// Spans the receiver already had (sent before, live or by an earlier push).
    already_sent: usize,
    /// Spans of hops still in flight, left for later.
    pub(crate) in_flight: usize,
}

impl PushReport {
    pub fn line(&self) -> String {
        let mut line = format!("{} spans sent to {}", self.sent, self.url);
        if self.already_sent > 0 {
            line.push_str(&format!(", {} already there", self.already_sent));
        }
        if self.in_flight > 0 {
            line.push_str(&format!(", {} of hops still in flight", self.in_flight));
        }
        if self.not_exported > 0 {
            line.push_str(&format!(", {} not exported", self.not_exported));
        }
        line
    }
}

/// Sends the spans of `traces` that `config.url` does not have yet.
pub async fn push(
    store: &Store,
    mut config: OtlpConfig,
    traces: &[TraceToExport<'_>],
) -> Result<PushReport> {
    // Someone is waiting at the terminal: a receiver that stays down is given up on sooner.
    config.retry_for = config.retry_for.min(PUSH_RETRY_FOR);
    let url = config.url.clone();
    let batch_size = config.batch;
    let options = config.spans;
    let client = OtlpClient::new(config);
    let tally = Tally::default();
    let (_no_shutdown, mut deadline) = watch::channel(None);
    let mut report = PushReport {
        url: url.clone(),
        ..PushReport::default()
    };
    let mut batch: Vec<Queued> = Vec::new();
    for trace in traces {
        let all = trace_spans(trace, options);
        let total = all.len();
        let spans = ended_spans(all, trace.hops);
        report.in_flight += total - spans.len();
        let keys: Vec<SpanKey> = spans.iter().map(|s| key_of(s, trace.id)).collect();
        let claimed = store.claim_spans(&url, &keys, true).await?;
        for (span, took) in spans.into_iter().zip(claimed) {
            if !took {
                report.already_sent += 1;
                continue;
            }
            batch.push(Queued {
                trace_id: trace.id.to_string(),
                span,
            });
            if batch.len() >= batch_size {
                send_batch(&client, store, &tally, &batch, &mut deadline).await;
                batch.clear();
            }
        }
    }
    if !batch.is_empty() {
        send_batch(&client, store, &tally, &batch, &mut deadline).await;
    }
    report.sent = tally.sent.load(Ordering::Relaxed);
    report.not_exported = tally.not_exported.load(Ordering::Relaxed);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::push_command;

    #[test]
    fn the_command_names_the_target_the_way_that_gives_it_back() {
        let all = "tracer export --all --format otlp";
        assert_eq!(
            push_command("http://127.0.0.1:6006/v1/traces"),
            format!("{all} --push http://127.0.0.1:6006")
        );
        assert_eq!(
            push_command("http://h:4318/ingest/otlp"),
            format!("{all} --push-traces-url http://h:4318/ingest/otlp")
        );
        assert_eq!(
            push_command("http://h/v1/traces/v1/traces"),
            format!("{all} --push-traces-url http://h/v1/traces/v1/traces")
        );
    }
}
