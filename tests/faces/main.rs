//! The faces of tracer over a recorded database: `tracer mcp` (with the MCP Python SDK and
//! notes-agent as clients), the HTML handout (checked in Rust and in headless Chromium) and the
//! TUI's timing view.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/interop_peers.rs"]
mod interop_peers;
#[path = "../support/sample_db.rs"]
mod sample_db;
#[path = "../notes_agent/scripted_checks.rs"]
#[allow(dead_code)] // shared with tests/notes_agent, which uses all of it
mod scripted_checks;
#[path = "../notes_agent/scripted_model.rs"]
#[allow(dead_code)] // shared with tests/notes_agent, which uses all of it
mod scripted_model;
#[path = "../notes_agent/scripted_replies.rs"]
#[allow(dead_code)] // shared with tests/notes_agent, which uses all of it
mod scripted_replies;
#[path = "../support/trace_hops.rs"]
mod trace_hops;

mod html_export;
mod interop_chromium;
mod interop_mcp;
mod mcp_agent;
mod mcp_server;
mod tui_timing;
