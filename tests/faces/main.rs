//! What people and tools see, one test binary: the TUI and replay, `show`/`ls`, exports,
//! serve-replay, `tracer demo` and `tracer up`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/interop_peers.rs"]
mod interop_peers;
#[path = "../support/trace_hops.rs"]
mod trace_hops;

#[allow(dead_code)]
#[path = "../reference/notes_agent/scripted_checks.rs"]
mod scripted_checks;
#[allow(dead_code)]
#[path = "../reference/notes_agent/scripted_model.rs"]
mod scripted_model;
#[allow(dead_code)]
#[path = "../reference/notes_agent/scripted_replies.rs"]
mod scripted_replies;

mod compare;
mod demo;
mod exports;
mod interop_tracer;
mod serve_replay;
mod stopping;
mod topology;
mod trace_cli;
mod tui;
mod tui_store;
