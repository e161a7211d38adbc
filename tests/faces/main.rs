//! What people and tools see, one test binary: the TUI and replay, `show`/`ls`, exports,
//! serve-replay, `tracer demo` and `tracer up`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/interop_peers.rs"]
mod interop_peers;

mod interop_phoenix;
mod otlp_live;
mod otlp_push;
mod otlp_receiver;
mod otlp_tracer;
