//! notes-agent end to end: the agent in-process on 127.0.0.1:0 against a scripted model server
//! (Ollama and OpenAI dialects) and the real notes-server (HTTP in-process, stdio as a process).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "notes_agent/harness.rs"]
mod harness;
#[path = "notes_agent/mcp_proxy.rs"]
mod mcp_proxy;
#[path = "notes_agent/scripted_checks.rs"]
mod scripted_checks;
#[path = "notes_agent/scripted_model.rs"]
mod scripted_model;
#[path = "notes_agent/scripted_replies.rs"]
mod scripted_replies;

#[path = "notes_agent/failures.rs"]
mod failures;
#[path = "notes_agent/interop.rs"]
mod interop;
#[path = "support/interop_peers.rs"]
mod interop_peers;
#[path = "notes_agent/loop_behaviour.rs"]
mod loop_behaviour;
#[path = "notes_agent/mcp_transports.rs"]
mod mcp_transports;
#[path = "notes_agent/openai_front.rs"]
mod openai_front;
#[path = "notes_agent/trace_context.rs"]
mod trace_context;
