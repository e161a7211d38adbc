//! The reference processes tracer sits between: the notes MCP server and the notes agent.

pub mod agent;
pub mod notes_server;
