//! The signals that ask a long-running tracer process to stop: SIGINT (Ctrl-C), SIGTERM, SIGHUP.
//! Commands finish and write their in-flight hops on any of them; `tracer wrap` passes each on.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Listens for the stop signals from creation on, for as long as it lives.
pub struct StopSignals {
    streams: Vec<(SignalKind, &'static str, Signal)>,
}

impl StopSignals {
    pub fn listen() -> Self {
        let kinds = [
            (SignalKind::interrupt(), "Ctrl-C"),
            (SignalKind::terminate(), "SIGTERM"),
            (SignalKind::hangup(), "SIGHUP"),
        ];
        let mut streams = Vec::new();
        for (kind, name) in kinds {
            match signal(kind) {
                Ok(stream) => streams.push((kind, name, stream)),
                Err(error) => tracing::warn!(%error, name, "cannot listen for a signal"),
            }
        }
        Self { streams }
    }

    /// The next stop signal: its kind and its name. Never resolves when none can be heard.
    pub async fn next(&mut self) -> (SignalKind, &'static str) {
        if self.streams.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.streams.iter_mut().map(|(kind, name, stream)| {
            let (kind, name) = (*kind, *name);
            Box::pin(async move {
                stream.recv().await;
                (kind, name)
            })
        });
        let (signal, _, _) = futures_util::future::select_all(waits).await;
        signal
    }
}

/// Resolves at the first stop signal, saying on stderr that in-flight hops are being finished.
pub async fn stop_requested(who: &str) {
    let (_, name) = StopSignals::listen().next().await;
    eprintln!("{who}: {name}: finishing in-flight hops");
}
