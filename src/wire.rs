//! Protocol shapes and dialect readers (MCP, JSON-RPC, Ollama, OpenAI, Anthropic, streams), and
//! recorded text made safe to print (`safe_text`); pure.

pub mod agent_api;
pub mod base64_fold;
pub mod content_encoding;
pub mod dialect;
pub mod ids;
pub mod jsonrpc;
pub mod mcp;
pub mod ollama;
pub mod openai;
pub mod openapi_tools;
pub mod redact;
pub mod safe_text;
pub mod stream;
pub mod stream_end;
pub mod trace_context;
pub mod websocket;
