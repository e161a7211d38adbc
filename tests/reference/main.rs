//! The reference processes, one test binary: notes-server (both MCP eras, HTTP and stdio) and
//! notes-agent (the loop against a scripted model and the real notes-server).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod notes_agent;
mod notes_server;
