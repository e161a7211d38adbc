//! Protocol shapes and dialect readers (MCP, JSON-RPC, Ollama, OpenAI, Anthropic, streams); pure.

pub mod dialect;
pub mod jsonrpc;
pub mod mcp;
pub mod stream;
