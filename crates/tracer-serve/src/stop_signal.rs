//! The signals that ask a long-running tracer process to stop: SIGINT (Ctrl-C), SIGTERM, SIGHUP.
//! Every long-running process treats them alike: finish in-flight work within its grace period
//! (a second signal cuts it short) and exit 0; `tracer wrap` passes each on to its child.

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::Shutdown;

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

/// A [`Shutdown`] driven by the stop signals: the first asks for a graceful stop (saying so on
/// stderr as `{who}: {signal}: ...`), a second cuts the grace period short.
pub fn shutdown_on_signals(who: &str) -> Shutdown {
    let mut signals = StopSignals::listen();
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
    let (second_tx, second_rx) = tokio::sync::oneshot::channel::<()>();
    let who = who.to_string();
    tokio::spawn(async move {
        // The stop is asked before it is told: a stderr that cannot be written (a closed pipe)
        // never keeps a process from stopping.
        let (_, name) = signals.next().await;
        let _ = first_tx.send(());
        crate::say!("{who}: {name}: finishing in-flight work (again to stop now)");
        let (_, name) = signals.next().await;
        let _ = second_tx.send(());
        crate::say!("{who}: {name} again: stopping now");
    });
    // A sender dropped without sending (the runtime is ending) stops nothing.
    Shutdown::new(async move {
        if first_rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    })
    .cut_short_by(async move {
        if second_rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}
