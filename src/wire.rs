//! Protocol shapes and dialect readers (MCP, JSON-RPC, Ollama, OpenAI, Anthropic, streams); pure.

pub mod dialect;
pub mod stream;
