//! tracer: a wire inspector for AI agents.
//!
//! Module map (arrows point down only):
//! - `hop`: the record of one hop, shared by every layer.
//! - `wire`: protocol shapes and dialect readers; pure, no sockets, no SQL.
//! - `trace`: grouping hops into traces, numbering and explaining messages; pure.
//! - `reference`: the notes MCP server and the notes agent, on `wire` alone.

pub mod hop;
pub mod reference;
pub mod trace;
pub mod wire;
