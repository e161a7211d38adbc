//! Test plumbing: a real notes-server in-process on a temp file, the agent in-process on port 0,
//! and a small HTTP client. Every network wait is bounded.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tempfile::TempDir;
use tokio::net::TcpListener;
use tracer_reference::agent::{Agent, AgentConfig, McpServerSpec, ModelApi};
use tracer_reference::notes_server::{self, NotesServer, NotesServerConfig};

pub const LIMIT: Duration = Duration::from_secs(20);

/// A notes-server on HTTP, with its notes file in a temp folder.
pub struct NotesServerHandle {
    pub url: String,
    pub file: PathBuf,
    _dir: TempDir,
}

impl NotesServerHandle {
    pub async fn start() -> Self {
        Self::start_answering_sse(false).await
    }

    /// With `sse`, the server answers every request as `text/event-stream`.
    pub async fn start_answering_sse(sse: bool) -> Self {
        Self::start_with(|config| config.sse = sse).await
    }

    /// Starts the server with its configuration adjusted by `adjust`.
    pub async fn start_with(adjust: impl FnOnce(&mut NotesServerConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("db");
        let mut config = NotesServerConfig::new(&file);
        adjust(&mut config);
        let server = NotesServer::open(config).await.unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(notes_server::serve_http(
            listener,
            server,
            std::future::pending(),
        ));
        Self {
            url,
            file,
            _dir: dir,
        }
    }

    pub fn spec(&self) -> McpServerSpec {
        McpServerSpec::Http {
            url: self.url.clone(),
        }
    }

    pub fn notes(&self) -> String {
        std::fs::read_to_string(&self.file).unwrap_or_default()
    }
}

/// A notes-server binary run by the agent over stdio, with its own temp notes file.
pub struct StdioNotesServer {
    pub file: PathBuf,
    _dir: TempDir,
}

impl StdioNotesServer {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self {
            file: dir.path().join("db"),
            _dir: dir,
        }
    }

    pub fn spec(&self) -> McpServerSpec {
        McpServerSpec::Stdio {
            program: env!("CARGO_BIN_EXE_notes-server").to_string(),
            args: vec![
                "--stdio".into(),
                "--file".into(),
                self.file.display().to_string(),
            ],
        }
    }

    pub fn notes(&self) -> String {
        std::fs::read_to_string(&self.file).unwrap_or_default()
    }
}

/// The agent's configuration for tests: short timeouts, the given model and MCP servers.
pub fn config(api: ModelApi, model_url: &str, mcp: Vec<McpServerSpec>) -> AgentConfig {
    let mut config = AgentConfig::new(api, model_url);
    config.mcp_servers = mcp;
    config.model_timeout = Duration::from_secs(10);
    config.mcp_timeout = Duration::from_secs(10);
    config
}

/// Starts the agent in-process; returns its base URL (`http://127.0.0.1:PORT`).
pub async fn start_agent(config: AgentConfig) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        if let Err(error) = tracer_reference::agent::serve(listener, config).await {
            panic!("agent stopped: {error}");
        }
    });
    url
}

/// Starts the agent in-process and keeps a handle on it (to shut it down).
pub async fn start_agent_handle(config: AgentConfig) -> (String, Arc<Agent>) {
    let agent = Arc::new(Agent::new(&config).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let serving = agent.clone();
    tokio::spawn(async move {
        let served =
            tracer_reference::agent::serve_until(listener, serving, std::future::pending()).await;
        if let Err(error) = served {
            panic!("agent stopped: {error}");
        }
    });
    (url, agent)
}

/// An address nothing listens on.
pub async fn closed_port_url(path: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{address}{path}")
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }
}

pub async fn send(method: Method, url: &str, body: &str, headers: &[(&str, &str)]) -> Reply {
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let mut request = Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = tokio::time::timeout(LIMIT, client.request(request))
        .await
        .expect("timed out")
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = tokio::time::timeout(LIMIT, response.into_body().collect())
        .await
        .expect("timed out")
        .unwrap();
    Reply {
        status,
        headers,
        text: String::from_utf8_lossy(&bytes.to_bytes()).into_owned(),
    }
}

/// `POST {agent}/agent {"message": message}`.
pub async fn ask(agent: &str, message: &str) -> Reply {
    ask_with(agent, message, &[]).await
}

pub async fn ask_with(agent: &str, message: &str, headers: &[(&str, &str)]) -> Reply {
    let body = serde_json::json!({ "message": message }).to_string();
    send(Method::POST, &format!("{agent}/agent"), &body, headers).await
}
