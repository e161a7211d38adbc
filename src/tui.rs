//! The terminal UI: the trace browser (`tracer tui`) and the replay screen (`tracer replay`).
//!
//! Elm-style: `app` is the state and its one `update(Action) -> Vec<Effect>`; `keymap` is the
//! only place keys are named; `effects` runs store reads on tokio and sends results back as
//! actions; `event` turns terminal events and ticks into actions; `view` draws state, changing
//! nothing but scroll positions; `terminal` restores the terminal on exit and on panic.

pub mod action;
pub mod app;
pub mod effects;
pub mod event;
pub mod export;
pub mod facts;
pub mod filter;
pub mod keymap;
pub mod terminal;
pub mod view;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use action::{Action, Effect};
use app::App;
use effects::Effects;
use terminal::TerminalGuard;

use tracer_store::Store;

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error(
        "tracer {0} needs a terminal: its output is not one (use `tracer ls`, `tracer show` or `tracer replay --plain` instead)"
    )]
    NotATerminal(&'static str),
    #[error("drawing on the terminal: {0}")]
    Terminal(String),
}

/// Refuses to start a full-screen UI when stdout is not a terminal.
pub fn require_terminal(command: &'static str) -> Result<(), TuiError> {
    if std::io::stdout().is_terminal() {
        Ok(())
    } else {
        Err(TuiError::NotATerminal(command))
    }
}

/// Runs `app` on the real terminal until it quits. Effects read `store` (None for a file).
pub async fn run(app: App, store: Option<Store>, export_dir: PathBuf) -> Result<(), TuiError> {
    let (sender, actions) = unbounded_channel();
    let effects = Effects::new(store, export_dir, sender.clone());
    run_with(app, effects, sender, actions).await
}

/// Runs `app` over a database that may not exist yet: the list waits for its first traces.
pub async fn run_waiting(app: App, db: PathBuf, export_dir: PathBuf) -> Result<(), TuiError> {
    let (sender, actions) = unbounded_channel();
    let effects = Effects::waiting_for(db, export_dir, sender.clone());
    run_with(app, effects, sender, actions).await
}

async fn run_with(
    app: App,
    effects: Effects,
    sender: tokio::sync::mpsc::UnboundedSender<Action>,
    mut actions: tokio::sync::mpsc::UnboundedReceiver<Action>,
) -> Result<(), TuiError> {
    // Heard before the screen changes: a signal at any moment from here on restores the terminal.
    let signals = event::spawn_stop_signals(sender.clone());
    let mut guard = TerminalGuard::enter().map_err(|e| TuiError::Terminal(e.to_string()))?;
    let input = event::spawn_input(sender.clone());
    let ticks = event::spawn_ticks(sender, Instant::now());
    let mut app = app;
    let outcome = run_loop(guard.terminal(), &mut app, &effects, &mut actions).await;
    input.abort();
    signals.abort();
    ticks.abort();
    drop(guard);
    outcome.map_err(|e| TuiError::Terminal(e.to_string()))
}

/// The loop, generic over the backend so tests can drive it: draw, wait for an action, update,
/// start the effects it asks for, draw again when something changed.
pub async fn run_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    effects: &Effects,
    actions: &mut UnboundedReceiver<Action>,
) -> Result<(), B::Error> {
    for effect in app.start() {
        effects.spawn(effect);
    }
    terminal.draw(|frame| view::render(app, frame))?;
    while let Some(action) = actions.recv().await {
        let mut redraw = step(app, effects, action);
        // Take whatever else is already waiting before drawing once.
        while let Ok(action) = actions.try_recv() {
            redraw |= step(app, effects, action);
        }
        if app.quit {
            break;
        }
        if redraw {
            terminal.draw(|frame| view::render(app, frame))?;
        }
    }
    Ok(())
}

fn step(app: &mut App, effects: &Effects, action: Action) -> bool {
    let tick = matches!(action, Action::Tick { .. });
    let before = tick.then(|| app.view.as_ref().and_then(|v| v.replay.clone()));
    for effect in app.update(action) {
        if effect != Effect::Quit {
            effects.spawn(effect);
        }
    }
    match before {
        Some(replay) => replay != app.view.as_ref().and_then(|v| v.replay.clone()),
        None => true,
    }
}

/// Sends logs to a file while the TUI owns the screen (RUST_LOG, else info).
pub fn log_to_file(path: &Path) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A second init (tests) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .try_init();
    Ok(())
}

/// The default log file of the TUI: `tracer-tui.log` in the temp folder.
pub fn default_log_file() -> PathBuf {
    std::env::temp_dir().join("tracer-tui.log")
}
