//! Protocol shapes and dialect readers (MCP, JSON-RPC, Ollama, OpenAI, Anthropic, streams), and
//! recorded text made safe to print (`safe_text`); pure.
//!
//! The bottom floor: the record of one hop and what the wire says in it, shared by every crate
//! above (the store, trace, the recorder, the exports, the reference processes and the app). It
//! may use no other tracer crate and no runtime, database or HTTP stack (no tokio, sqlx or hyper:
//! `scripts/check_layers.py`); it reads bytes and values, never sockets or files.
//!
//! Its API is what those crates use and nothing more: everything else is `pub(crate)`, and
//! `unreachable_pub` warns of a `pub` item no other crate can reach.

#![warn(unreachable_pub)]

// The record: one hop as the proxy and the wrapper make it and the store keeps it, and its ids.
pub mod hop;
pub mod ids;

// What the record must not keep, and its bodies made readable and safe to print.
pub mod base64_fold;
pub mod content_encoding;
pub mod redact;
pub mod safe_text;

// Times as the agents write them.
pub mod rfc3339;

// Framings on the wire: SSE and NDJSON streams, their ends, WebSocket frames.
pub mod stream;
pub mod stream_end;
pub mod websocket;

// Protocols' shapes: JSON-RPC and MCP, the model APIs, the reference agent's API, OpenAPI tool
// servers, W3C trace context.
pub mod agent_api;
pub mod jsonrpc;
pub mod mcp;
pub mod ollama;
pub mod openai;
pub mod openapi_tools;
pub mod trace_context;

// An agent's own telemetry record (OpenTelemetry), its join keys shared with the wire.
pub mod agent_event;

// Reading a hop's bodies in its dialect (chat, MCP, agent API), over all of the above.
pub mod dialect;
