//! notes-agent: the reference agent host (the buy-milk article's `local_agent`).
//!
//! `POST /agent {"message"}` runs the loop: tools/list on every MCP server, the model with those
//! tools, tools/call for each tool call, the model again with the whole history, until it
//! answers without tools. It speaks Ollama or OpenAI chat to the model and MCP over HTTP (both
//! eras) or stdio to tools, propagates W3C trace context on every call, and also serves an
//! OpenAI-compatible `/v1/chat/completions` so any chat client can drive it.
//!
//! Layout: `config` (flags and defaults), `conversation` (the neutral history), `model_client`
//! (the two chat dialects), `mcp_client` (HTTP and stdio transports), `toolbox` (tool names),
//! `agent_loop` (the loop), `http` and `openai_front` (the HTTP faces), `outbound` and
//! `upstream_error` (calling upstreams and reporting their failures).

pub(crate) mod agent_loop;
pub mod cli;
pub mod config;
pub(crate) mod conversation;
pub(crate) mod http;
pub mod mcp_client;
pub(crate) mod model_client;
pub(crate) mod openai_front;
pub mod outbound;
pub mod replies;
pub(crate) mod toolbox;
pub mod upstream_error;

use std::sync::Arc;

use tokio::net::TcpListener;

pub use agent_loop::Agent;
pub use config::{AgentConfig, ConfigError, McpServerSpec, ModelApi};

/// Why the agent could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("accepting connections: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves `agent` on `listener` until `shutdown` resolves. Nothing upstream is contacted until
/// a request comes in, so the model and MCP servers need not be up yet.
pub async fn serve_until(
    listener: TcpListener,
    agent: Arc<Agent>,
    shutdown: impl Into<tracer_serve::Shutdown>,
) -> Result<(), ServeError> {
    http::serve_until(listener, agent, shutdown).await?;
    Ok(())
}

/// Checks `config`, then serves the agent on `listener` for as long as the task runs (tests
/// start it on port 0).
pub async fn serve(listener: TcpListener, config: AgentConfig) -> Result<(), ServeError> {
    let agent = Arc::new(Agent::new(&config)?);
    serve_until(listener, agent, std::future::pending()).await
}
