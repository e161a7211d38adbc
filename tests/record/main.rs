//! The recording path, one test binary: the proxy and its store, stdio wrapping, the dialect
//! readers, grouping and numbering, the hop log, HTTPS (TLS upstreams, the forward proxy, tracer's
//! CA), and the `tracer` command line around them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/agent_doubles.rs"]
mod agent_doubles;
#[path = "../support/agent_trace.rs"]
mod agent_trace;
#[path = "../support/contention.rs"]
mod contention;
#[macro_use]
#[path = "../support/dialect_hops.rs"]
mod dialect_hops;
#[path = "../support/free_ports.rs"]
mod free_ports;
#[path = "../support/interop_peers.rs"]
mod interop_peers;
#[path = "../support/offline_side_calls.rs"]
mod offline_side_calls;
#[path = "../support/session_fixtures.rs"]
mod session_fixtures;
#[path = "../support/trace_hops.rs"]
mod trace_hops;

mod agent_sessions;
mod agent_subagents;
mod agent_traces;
mod big_bodies;
mod ca_checks;
mod cli;
mod connection_workers;
mod correlate;
mod dialects_agents;
mod dialects_agents_chat;
mod dialects_cloud;
mod dialects_encoded;
mod dialects_gemini;
mod dialects_gemini_side;
mod dialects_mcp;
mod dialects_model;
mod dialects_robust;
mod dialects_tokens;
mod foreign_files;
mod grouping;
mod grouping_evidence;
mod grouping_own_calls;
mod grouping_pages;
mod grouping_proxy;
mod grouping_sessions;
mod hop_log;
mod http_shapes;
mod https_ca;
mod https_forward_edges;
mod https_forward_limits;
mod https_ragged_end;
mod https_reverse;
mod https_support;
mod interop_agent_samples;
mod interop_agent_sessions;
mod interop_agents;
mod interop_codex_websocket;
mod interop_https_curl;
mod interop_https_sdk;
mod interop_mcp_sdk;
mod interop_mcp_tour;
mod interop_mcpo;
mod kept_while_recording;
mod listen_edges;
mod long_session;
mod mcp_tour;
mod mcpo_checks;
mod mcpo_links;
mod mcpo_replay;
mod open_webui_replay;
mod openai_double;
mod preconnect_grouping;
mod proxy;
mod run_agent_fork;
mod run_agent_telemetry;
mod run_agents;
mod run_boundaries;
mod run_cli;
mod run_overrides;
mod run_terminal;
mod run_words;
mod secrets;
mod secrets_edges;
mod session_cost;
mod shared_database;
mod side_call_status;
mod standing_streams;
mod store_faults;
mod trace_summary;
mod transport_moves;
mod websocket_codex;
mod websocket_frames;
mod websocket_live;
mod withdrawn_words;
mod wrap;
mod wrap_trace;
