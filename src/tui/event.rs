//! Where actions come from besides effects: key presses and resizes from the terminal, stop
//! signals, and a steady tick carrying a monotonic clock. All feed the loop's one channel.

use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyEventKind};
use futures_util::StreamExt;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use super::action::Action;

/// How often the loop gets a tick (replay pacing, store polling).
pub const TICK: Duration = Duration::from_millis(100);

/// Reads the terminal's events: key presses (not releases) and resizes.
pub fn spawn_input(actions: UnboundedSender<Action>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut events = EventStream::new();
        while let Some(event) = events.next().await {
            let action = match event {
                Ok(Event::Key(key)) if key.kind == KeyEventKind::Press => Action::Key(key),
                Ok(Event::Resize(_, _)) => Action::Resize,
                Ok(_) => continue,
                Err(error) => {
                    tracing::warn!("reading the terminal: {error}");
                    break;
                }
            };
            if actions.send(action).is_err() {
                break;
            }
        }
    })
}

/// Turns the first stop signal (SIGINT, SIGTERM, SIGHUP) into [`Action::StopSignal`].
pub fn spawn_stop_signals(actions: UnboundedSender<Action>) -> JoinHandle<()> {
    let mut signals = tracer_serve::stop_signal::StopSignals::listen();
    tokio::spawn(async move {
        signals.next().await;
        let _ = actions.send(Action::StopSignal);
    })
}

/// Sends a tick every `TICK`, with nanoseconds since `origin`.
pub fn spawn_ticks(actions: UnboundedSender<Action>, origin: Instant) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(TICK);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            interval.tick().await;
            let now_ns = i64::try_from(origin.elapsed().as_nanos()).unwrap_or(i64::MAX);
            if actions.send(Action::Tick { now_ns }).is_err() {
                break;
            }
        }
    })
}
