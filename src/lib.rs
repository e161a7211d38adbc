//! tracer: a wire inspector for AI agents.
//!
//! Module map (arrows point down only):
//! - `hop`: the record of one hop, shared by every layer (it uses nothing else in the crate).
//! - `wire`: protocol shapes and dialect readers (over `hop`'s record); pure, no sockets, no SQL.
//! - `store`: SQLite (all SQL, migrations, the batching writer).
//! - `trace`: grouping hops into traces, numbering and explaining messages; pure but for its
//!   thin `correlate` driver.
//! - `reference`: the notes MCP server and the notes agent, on `wire` alone.
//! - `ca`: tracer's own certificate authority (`tracer ca`), minting certificates for the
//!   forward proxy's interception.
//! - `proxy`: listeners, streaming forwarding and the body tee; hands hops to the store writer.
//! - `wrap`: records a stdio MCP server run as a child, in the same database.
//! - `export`: traces as files: the JSON hop log, HAR, OTLP, Mermaid and Markdown.
//! - `exporter`: the live OpenTelemetry exporter over the store (`--otlp` on proxy, up, wrap)
//!   and `tracer export --push`.
//! - `replay_server`: a recorded trace standing in for a model or MCP server.
//! - `run`: `tracer run -- COMMAND`: a program run with the proxy and trust set, a known agent's
//!   stdio MCP servers started through `tracer wrap` for the run (faces floor; `cli/run_cmd.rs`
//!   wires it to `proxy`, `store` and `ca`).
//! - `compare`: `diff`, `rerun` and `eval`: traces as steps, compared, re-sent and judged.
//! - `tui`: the trace browser and replay screen; `replay`: stepping through a trace.
//! - `topology`: the article's processes with tracer in the middle (`tracer up`); `demo`: the
//!   article end to end (`tracer demo`).
//! - `trace_mcp`: `tracer mcp`, the database as a read-only MCP server (notes-server's protocol).
//! - `cli`: the `tracer` command line; `logging`: where logs go; `stop_signal`: SIGINT, SIGTERM,
//!   SIGHUP.

pub mod ca;
pub mod cli;
pub mod compare;
pub mod demo;
pub mod export;
pub mod exporter;
pub mod hop;
pub mod logging;
pub mod proxy;
pub mod reference;
pub mod replay;
pub mod replay_server;
pub mod run;
pub mod serve;
pub mod stop_signal;
pub mod store;
pub mod topology;
pub mod trace;
pub mod trace_mcp;
pub mod tui;
pub mod wire;
pub mod wrap;
