//! The receiver of the agent's own telemetry served beside a recording (`--otlp-listen ADDR` on
//! `proxy` and `up`; on its own port in every `tracer run`): bound before the recording starts,
//! stopped after it, with what it took in said at the end.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use clap::Args;

use tracer_record::agent_telemetry::{ForwardTo, IntakeCounts, IntakeSettings, TelemetryIntake};
use tracer_store::Store;

/// `--otlp-listen ADDR`: receive the agent's own telemetry.
#[derive(Debug, Clone, Args)]
pub struct OtlpListenFlag {
    /// Also receive agents' own OpenTelemetry (OTLP/HTTP logs, traces and metrics) on ADDR and
    /// store it beside the hops (point the agent's OTEL_EXPORTER_OTLP_ENDPOINT at it)
    #[arg(long = "otlp-listen", value_name = "ADDR")]
    pub otlp_listen: Option<SocketAddr>,
}

/// How the receiver keeps what it gets, from the recording's own settings.
pub struct Keeping {
    pub redact: bool,
    pub max_body: usize,
    pub run_id: Option<String>,
}

/// A receiver serving beside a recording.
pub struct TelemetryBeside {
    endpoint: String,
    forwards: bool,
    /// It listens beyond loopback.
    open: bool,
    counts: Arc<IntakeCounts>,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<Result<(), tracer_record::agent_telemetry::IntakeError>>,
}

impl TelemetryBeside {
    /// Binds `listen` and starts receiving; what arrives is passed on to the endpoint the user's
    /// own OTEL_EXPORTER_OTLP_* variables name, if any.
    pub async fn start(
        listen: SocketAddr,
        store: &Store,
        keeping: Keeping,
    ) -> anyhow::Result<Self> {
        let forward = ForwardTo::from_env(|name| std::env::var(name).ok());
        let settings = IntakeSettings {
            listen,
            redact: keeping.redact,
            max_value: keeping.max_body,
            run_id: keeping.run_id,
            forward,
        };
        let intake = TelemetryIntake::bind(store.clone(), settings).await?;
        let endpoint = intake.endpoint();
        let open = tracer_serve::reachable_from_elsewhere(intake.local_addr());
        let forwards = intake.forwards();
        let counts = intake.counts();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = tokio::spawn(intake.run(async move {
            let _ = stopped.await;
        }));
        Ok(TelemetryBeside {
            endpoint,
            forwards,
            open,
            counts,
            stop,
            served,
        })
    }

    /// Starts one when `flag` asks for it.
    pub async fn start_if(
        flag: &OtlpListenFlag,
        store: &Store,
        keeping: Keeping,
    ) -> anyhow::Result<Option<Self>> {
        match flag.otlp_listen {
            Some(listen) => Ok(Some(Self::start(listen, store, keeping).await?)),
            None => Ok(None),
        }
    }

    /// The endpoint for an agent's OTEL_EXPORTER_OTLP_ENDPOINT.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The line that says where it listens.
    pub fn line(&self) -> String {
        let passed = if self.forwards {
            " (and passed on to your own OTEL_EXPORTER_OTLP_ENDPOINT)"
        } else {
            ""
        };
        let open = if self.open {
            "; warning: not a loopback address: anyone who can reach it can add events"
        } else {
            ""
        };
        format!(
            "tracer: receiving agents' own telemetry on {} (OTLP/HTTP){passed}{open}",
            self.endpoint
        )
    }

    /// Stops receiving (requests in flight are finished) and says what was taken in: the line,
    /// and how many records were received.
    pub async fn finish(self) -> (String, u64) {
        let _ = self.stop.send(());
        if let Ok(Err(error)) = self.served.await {
            tracer_serve::say!("tracer: {error}");
        }
        let c = &self.counts;
        let (received, stored) = (
            c.received.load(Ordering::Relaxed),
            c.stored.load(Ordering::Relaxed),
        );
        let refused = c.refused.load(Ordering::Relaxed);
        let requests = c.requests.load(Ordering::Relaxed);
        let mut line = format!(
            "tracer: the agent's own telemetry: {received} records received in {requests} requests, {stored} stored"
        );
        if refused > 0 {
            line.push_str(&format!(", {refused} requests refused"));
        }
        (line, received)
    }
}
