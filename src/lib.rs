//! tracer: a wire inspector for AI agents.
//!
//! This crate is the app, the workspace's top floor: the faces, and the commands that wire the
//! crates below together (docs/architecture.md draws them; `scripts/check_layers.py` and
//! `scripts/check_architecture.py` keep every arrow pointing down).
//!
//! Module map (the app's own modules; what each uses is in docs/architecture.md):
//! - `cli`: the `tracer` command line: clap types and one file per command, each starting the
//!   crates' parts (a recording is a `tracer-record` `Recording` that the proxy or wrap records
//!   into, with `tracer-live`'s grouping beside it); nothing uses `cli`.
//! - `recording_beside`: live grouping (tracer-live's) as work beside a `Recording`, which
//!   tracer-record may not name itself; `cli` and `topology` start it.
//! - `tui`: the trace browser and the replay screen (state apart from drawing).
//! - `replay`: stepping through a trace; where a trace comes from (`replay::source`).
//! - `replay_server`: a recorded trace standing in for a model or MCP server (`serve-replay`).
//! - `compare`: `diff`, `rerun` and `eval`: traces as steps, compared, re-sent and judged.
//! - `trace_mcp`: `tracer mcp`, the database as a read-only MCP server (notes-server's protocol).
//! - `run`: `tracer run -- COMMAND`: a program run with the proxy and trust set, a known agent's
//!   stdio MCP servers started through `tracer wrap` for the run (`cli/run_cmd.rs` starts the
//!   recording).
//! - `topology`: the article's processes with tracer in the middle (`tracer up`); `demo`: the
//!   article end to end (`tracer demo`).

pub mod claude_sources;
pub mod cli;
pub mod compare;
pub mod demo;
pub mod fork;
pub mod recording_beside;
pub mod replay;
pub mod replay_server;
pub mod run;
pub mod topology;
pub mod trace_mcp;
pub mod tui;
