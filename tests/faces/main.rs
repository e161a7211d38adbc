//! The faces of tracer over a recorded database: `tracer mcp` (with the MCP Python SDK and
//! notes-agent as clients), the HTML handout (checked in Rust and in headless Chromium) and the
//! TUI's timing view.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The scripted model is shared with tests/notes_agent, which uses all of it.
#![allow(dead_code)]

#[path = "../support/interop_peers.rs"]
mod interop_peers;
#[path = "../support/sample_db.rs"]
mod sample_db;
#[path = "../notes_agent/scripted_checks.rs"]
mod scripted_checks;
#[path = "../notes_agent/scripted_model.rs"]
mod scripted_model;
#[path = "../notes_agent/scripted_replies.rs"]
mod scripted_replies;

mod html_export;
mod interop_chromium;
mod interop_mcp;
mod mcp_agent;
mod mcp_server;
mod tui_timing;
