//! What people and tools see, one test binary: the TUI (and its timing view) and replay,
//! `show`/`ls`, exports (the HTML handout in Rust and in headless Chromium), serve-replay,
//! `tracer demo` and `tracer up`, compare runs, `tracer mcp`, how every process stops, hostile
//! recorded content through every face (and the html page's CSP), a closed stdout, and log lines.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/agent_trace.rs"]
mod agent_trace;
#[path = "../support/free_ports.rs"]
mod free_ports;
#[path = "../support/interop_peers.rs"]
mod interop_peers;
#[path = "../support/offline_side_calls.rs"]
mod offline_side_calls;
#[path = "../support/sample_db.rs"]
mod sample_db;
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

mod agent_samples;
mod agent_telemetry;
mod claude_import;
mod closed_stdout;
mod compare;
mod cost;
mod demo;
mod encoded_bodies;
mod exports;
mod hostile;
mod hostile_more;
mod html_context;
mod html_csp;
mod html_export;
mod interop_chromium;
mod interop_chromium_layout;
mod interop_mcp;
mod interop_phoenix;
mod interop_tracer;
mod interop_ui;
mod interop_ui_live;
mod interop_ui_views;
mod log_lines;
mod long_session_html;
mod mcp_agent;
mod mcp_faces;
mod mcp_server;
mod newcomer;
mod newcomer_readme;
mod odd_databases;
mod open_listeners;
mod otlp_grow;
mod otlp_live;
mod otlp_push;
mod otlp_receiver;
mod otlp_tracer;
mod search;
mod serve_replay;
mod stopping;
mod stopping_pipes;
mod tokens;
mod topology;
mod trace_cli;
mod tui;
mod tui_agent;
mod tui_context;
mod tui_let_go;
mod tui_search;
mod tui_side_call_status;
mod tui_side_calls;
mod tui_store;
mod tui_timing;
mod ui_live;
mod ui_server;
