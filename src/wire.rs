//! Protocol shapes and dialect readers (MCP, JSON-RPC, Ollama, OpenAI, Anthropic, streams); pure.

pub mod agent_api;
pub mod dialect;
pub mod ids;
pub mod jsonrpc;
pub mod mcp;
pub mod ollama;
pub mod openai;
pub mod redact;
pub mod stream;
pub mod trace_context;
