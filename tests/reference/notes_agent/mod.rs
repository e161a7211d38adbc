//! notes-agent end to end: the agent in-process on 127.0.0.1:0 against a scripted model server
//! (Ollama and OpenAI dialects) and the real notes-server (HTTP in-process, stdio as a process).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "harness.rs"]
mod harness;
#[path = "mcp_proxy.rs"]
mod mcp_proxy;
#[path = "scripted_checks.rs"]
mod scripted_checks;
#[path = "scripted_model.rs"]
mod scripted_model;
#[path = "scripted_replies.rs"]
mod scripted_replies;

#[path = "failures.rs"]
mod failures;
#[path = "interop.rs"]
mod interop;
#[path = "../../support/interop_peers.rs"]
mod interop_peers;
#[path = "loop_behaviour.rs"]
mod loop_behaviour;
#[path = "mcp_transports.rs"]
mod mcp_transports;
#[path = "openai_front.rs"]
mod openai_front;
#[path = "trace_context.rs"]
mod trace_context;
