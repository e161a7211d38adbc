//! The live OpenTelemetry exporter (`--otlp`): a watcher over the store queues the spans of each
//! trace once its grouping has settled, and a sender posts them in batches to an OTLP/HTTP
//! receiver. It reads the database only, so traffic never waits on it; what it cannot deliver is
//! marked in `otlp_spans` and counted in `spans_not_exported`, for `tracer export --push`.

mod client;
pub mod config;
pub mod push;
mod sender;
mod url_credentials;
mod watch;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch as signal};
use tokio::task::JoinHandle;

pub(crate) use client::OtlpClient;
pub use config::{ConfigError, OtlpConfig, OtlpFlags};
use sender::Tally;
use watch::Watcher;

use tracer_store::Store;
use tracer_wire::hop::now_unix_ns;

/// How long stopping waits for the receiver to take the last spans (the default).
pub const FINISH_GRACE: Duration = Duration::from_secs(5);

/// How long past the grace stopping waits for the sender to record the last outcomes in the
/// store (a mark may wait out the busy timeout for the write lock).
const RECORD_ALLOWANCE: Duration =
    tracer_store::BUSY_TIMEOUT.saturating_add(Duration::from_secs(2));

/// A running exporter; `finish` sends what is left and says what was delivered.
pub struct Exporter {
    url: String,
    stop: signal::Sender<bool>,
    deadline: signal::Sender<Option<Instant>>,
    watcher: JoinHandle<()>,
    sender: JoinHandle<()>,
    tally: Arc<Tally>,
}

/// What an exporter delivered over its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportReport {
    pub(crate) url: String,
    pub(crate) sent: u64,
    pub(crate) not_exported: u64,
}

impl ExportReport {
    /// One line for the end of a run.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} spans exported to {}, {} not exported",
            self.sent, self.url, self.not_exported
        );
        if self.not_exported > 0 {
            line.push_str(&format!(
                " (send them later: {})",
                push::push_command(&self.url)
            ));
        }
        line
    }
}

/// Starts the exporter when one is configured, saying where spans go (on stderr: stdout may be
/// a protocol stream, as under `tracer wrap`).
pub fn start_configured(
    config: Option<OtlpConfig>,
    store: &Store,
    group_first: bool,
) -> Option<Exporter> {
    let config = config?;
    tracer_serve::say!("{}", describe(&config));
    Some(Exporter::start(store.clone(), config, group_first))
}

/// `tracer: exporting spans to URL (protobuf, gzip), 2 s after each trace settles`.
pub(crate) fn describe(config: &OtlpConfig) -> String {
    let mut how = vec![match config.encoding {
        crate::otlp::Encoding::Protobuf => "protobuf",
        crate::otlp::Encoding::Json => "json",
    }];
    if config.gzip {
        how.push("gzip");
    }
    if config.spans.content {
        how.push("with contents");
    }
    format!(
        "tracer: exporting spans to {} ({}), {} s after each trace settles",
        config.url,
        how.join(", "),
        config.delay.as_secs_f64()
    )
}

impl Exporter {
    /// Starts exporting the traces of hops recorded from now on. `group_first` groups new hops
    /// before each look (for a process that runs no grouping of its own).
    pub(crate) fn start(store: Store, config: OtlpConfig, group_first: bool) -> Exporter {
        let url = config.url.clone();
        let tally = Arc::new(Tally::default());
        let (queue, queued) = mpsc::channel(config.queue);
        let (stop, mut stopped) = signal::channel(false);
        let (deadline, deadline_rx) = signal::channel(None);
        let delay_ns = i64::try_from(config.delay.as_nanos()).unwrap_or(i64::MAX);
        let every =
            (config.delay / 2).clamp(Duration::from_millis(100), Duration::from_millis(500));
        let mut watcher = Watcher {
            store: store.clone(),
            target: url.clone(),
            options: config.spans,
            group_first,
            queue,
            tally: tally.clone(),
            low_ns: now_unix_ns(),
        };
        let watcher = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = stopped.changed() => break,
                    _ = ticks.tick() => {
                        let settled = now_unix_ns().saturating_sub(delay_ns);
                        if let Err(error) = watcher.scan(settled).await {
                            tracing::warn!(%error, "looking for traces to export");
                        }
                    }
                }
            }
            // Stopping: every trace whose hops have all ended is sent now.
            if let Err(error) = watcher.scan(i64::MAX).await {
                tracing::warn!(%error, "looking for the last traces to export");
            }
        });
        let client = OtlpClient::new(config);
        let sender = tokio::spawn(sender::run(
            queued,
            client,
            store,
            tally.clone(),
            deadline_rx,
        ));
        Exporter {
            url,
            stop,
            deadline,
            watcher,
            sender,
            tally,
        }
    }

    /// Queues every trace that has ended (call after the last grouping), then gives the receiver
    /// at most `grace` to take what is queued; what it did not take is counted as not exported.
    /// The sender has stopped when this returns (the store may be closed next).
    pub async fn finish(self, grace: Duration) -> ExportReport {
        let _ = self.deadline.send(Some(Instant::now() + grace));
        let _ = self.stop.send(true);
        let _ = self.watcher.await;
        // The watcher held the queue's only sender: the sender drains it and stops.
        let mut sender = self.sender;
        if tokio::time::timeout(grace + RECORD_ALLOWANCE, &mut sender)
            .await
            .is_err()
        {
            sender.abort();
            let _ = sender.await;
        }
        // Spans a sender stopped midway did not count were not exported either (their rows stay
        // `sending`, which a push takes again once stale).
        let unsettled = self.tally.unsettled();
        if unsettled > 0 {
            tracing::warn!(spans = unsettled, "the OTLP sender did not finish in time");
        }
        ExportReport {
            url: self.url,
            sent: self.tally.sent.load(Ordering::Relaxed),
            not_exported: self.tally.not_exported.load(Ordering::Relaxed) + unsettled,
        }
    }
}
