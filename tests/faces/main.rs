//! What people and tools see, one test binary: the TUI and replay, `show`/`ls`, exports,
//! serve-replay, `tracer demo` and `tracer up`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/interop_peers.rs"]
mod interop_peers;
#[path = "../support/trace_hops.rs"]
mod trace_hops;

mod demo;
mod exports;
mod interop_tracer;
mod serve_replay;
mod stopping;
mod topology;
mod trace_cli;
mod tui;
mod tui_store;
