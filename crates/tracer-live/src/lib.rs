//! Grouping and loading over the store: the pure grouper driven over a database, live as the proxy
//! records and once over a whole file; a trace loaded for reading (`load`); readings kept; search.
//!
//! Floor 2: it may use `tracer-store`, `tracer-trace` and `tracer-wire`, nothing above them
//! (`scripts/check_layers.py`); it is where the pure `tracer-trace` meets SQLite and the runtime.
//! `tracer-export` (the hop log from a loaded trace, the live exporter's watcher) and the app
//! (CLI, TUI, compare, replay, `tracer mcp`, the grouping beside a recording) use it; the recorder
//! does not. Its API is what they use: everything else is private or `pub(crate)`, and
//! `unreachable_pub` warns of a `pub` item no other crate can reach.

#![warn(unreachable_pub)]

// Grouping over the database: once over a file, and live from pass to pass while recording.
pub mod correlate;
pub mod live_group;

// Reading: the one loader of a trace, and the one search over the recorded text; the agent's
// own telemetry placed in a loaded trace.
pub mod agent_account;
pub mod load;
pub mod search;

// Readings kept while recording, so opening a trace need not read large requests again.
pub mod readings_as_recorded;

// Inside: one stored hop fed to a grouper; readings kept and taken back when a trace is opened.
mod feed;
mod kept_readings;
