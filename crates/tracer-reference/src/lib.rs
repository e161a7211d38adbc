//! The reference processes tracer sits between: the notes MCP server and the notes agent.
//!
//! Processes that know nothing of tracer: they may use the protocol shapes (`tracer-wire`) and a
//! process's plumbing (`tracer-serve`), never the store, trace or anything above
//! (`scripts/check_layers.py`). The binaries `notes-server` and `notes-agent` are thin mains
//! over this library. The product runs both in `tracer up` and `tracer demo`, serves `tracer mcp`
//! over the server's transports and calls MCP servers with the agent's client in `tracer rerun`;
//! the tests start both in-process. Its API is what those use; everything else is `pub(crate)`,
//! and `unreachable_pub` warns of a `pub` item no other crate can reach.

#![warn(unreachable_pub)]

// The MCP server the agent calls (five notes tools, both eras, HTTP or stdio).
pub mod notes_server;

// The agent host: its flags and config, the loop between the model and the MCP servers.
pub mod agent;
