//! The model side of the loop: one chat call with the whole history and the tools, in the
//! configured dialect (Ollama `/api/chat` or OpenAI chat completions), whole or streamed.
//!
//! Streamed answer text can be handed to a sink as it arrives (the OpenAI-compatible front uses
//! this), with `<think>` blocks filtered out. The dialects live in the two submodules.

mod ollama_chat;
mod openai_chat;

use std::time::Duration;

use http::{HeaderMap, StatusCode, Uri};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;

use super::config::{AgentConfig, ConfigError, ModelApi};
use super::conversation::{AssistantTurn, ThinkFilter, Turn};
use super::outbound::{self, BodyReader, HttpClient};
use super::upstream_error::{FailureKind, UpstreamError};
use tracer_wire::agent_api::Upstream;
use tracer_wire::openai::Tool;
use tracer_wire::trace_context::TraceContext;

/// A tool as the model is told about it (MCP `inputSchema` becomes `parameters` as it is).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelTool {
    pub name: String,
    pub description: Option<String>,
    pub parameters: Value,
}

/// The tools as both chat APIs take them (`{"type":"function","function":{...}}`).
fn wire_tools(tools: &[ModelTool]) -> Vec<Tool> {
    tools
        .iter()
        .map(|t| Tool::function(&t.name, t.description.clone(), t.parameters.clone()))
        .collect()
}

/// What one model call produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelReply {
    pub turn: AssistantTurn,
    /// The model name the server reported (or the one asked for).
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Why a chat call did not produce a reply.
#[derive(Debug)]
pub(crate) enum ChatError {
    Upstream(UpstreamError),
    /// The sink's receiver went away: whoever wanted the streamed answer is gone.
    SinkClosed,
}

impl From<UpstreamError> for ChatError {
    fn from(error: UpstreamError) -> Self {
        ChatError::Upstream(error)
    }
}

/// Receives answer text as the model streams it.
pub(crate) struct AnswerSink {
    tx: mpsc::Sender<String>,
    filter: ThinkFilter,
    /// Some text has gone out.
    emitted: bool,
    /// A new step began after text went out: the next text starts a new paragraph.
    separate: bool,
}

impl AnswerSink {
    pub(crate) fn new(tx: mpsc::Sender<String>) -> Self {
        Self {
            tx,
            filter: ThinkFilter::new(),
            emitted: false,
            separate: false,
        }
    }

    /// Marks the start of another model call, so its text does not run into the last one's.
    pub(crate) fn step_boundary(&mut self) {
        self.separate = self.emitted;
    }

    async fn text(&mut self, text: &str) -> Result<(), ChatError> {
        let (answer, _thinking) = self.filter.push(text);
        self.send(answer).await
    }

    /// Ends one model call's text (flushes a held-back partial tag) and resets for the next.
    async fn end_of_reply(&mut self) -> Result<(), ChatError> {
        let (answer, _thinking) = self.filter.finish();
        self.filter = ThinkFilter::new();
        self.send(answer).await
    }

    /// Sends text to the receiver (also text that did not come from the model, like notes).
    pub(crate) async fn send(&mut self, text: String) -> Result<(), ChatError> {
        if text.is_empty() {
            return Ok(());
        }
        let text = if std::mem::take(&mut self.separate) {
            format!("\n\n{text}")
        } else {
            text
        };
        self.emitted = true;
        self.tx.send(text).await.map_err(|_| ChatError::SinkClosed)
    }
}

/// A client for the configured model server.
#[derive(Debug, Clone)]
pub(crate) struct ModelClient {
    api: ModelApi,
    uri: Uri,
    model: String,
    stream: bool,
    api_key: Option<String>,
    keep_alive: Option<String>,
    timeout: Duration,
    http: HttpClient,
    upstream: Upstream,
}

impl ModelClient {
    pub(crate) fn new(config: &AgentConfig, http: HttpClient) -> Result<Self, ConfigError> {
        let url = config.chat_url();
        let uri = outbound::parse_http_url("--model-url", &url)?;
        Ok(Self {
            api: config.model_api,
            uri,
            model: config.model.clone(),
            stream: config.stream,
            api_key: config.api_key.clone(),
            keep_alive: config.keep_alive.clone(),
            timeout: config.model_timeout,
            http,
            upstream: Upstream {
                role: "model".to_string(),
                name: config.model_api.as_str().to_string(),
                address: url,
            },
        })
    }

    pub(crate) fn model(&self) -> &str {
        &self.model
    }

    /// One chat call with the whole history. `tools: None` asks for an answer without tools.
    /// With a sink the call streams and answer text goes to the sink as it arrives.
    pub(crate) async fn chat(
        &self,
        history: &[Turn],
        tools: Option<&[ModelTool]>,
        trace: &TraceContext,
        sink: Option<&mut AnswerSink>,
    ) -> Result<ModelReply, ChatError> {
        let stream = self.stream || sink.is_some();
        let (body, extra) = match self.api {
            ModelApi::Ollama => (
                ollama_chat::request_body(self, history, tools, stream),
                HeaderMap::new(),
            ),
            ModelApi::OpenAi => (
                openai_chat::request_body(self, history, tools, stream),
                openai_chat::auth_headers(self.api_key.as_deref()),
            ),
        };
        let request = outbound::json_post(&self.uri, body, trace, extra);
        let response = outbound::send(&self.http, request, self.timeout, &self.upstream).await?;
        let status = response.status();
        let content_type = outbound::content_type(response.headers());
        let reader = BodyReader::new(response.into_body(), self.timeout, &self.upstream);
        if !status.is_success() {
            let body = reader.read_to_end().await?;
            return Err(self.status_error(status, &body).into());
        }
        let reply = match self.api {
            ModelApi::Ollama => ollama_chat::read_reply(self, reader, &content_type, sink).await?,
            ModelApi::OpenAi => openai_chat::read_reply(self, reader, &content_type, sink).await?,
        };
        Ok(reply)
    }

    fn status_error(&self, status: StatusCode, body: &[u8]) -> UpstreamError {
        let message = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|value| match value.get("error") {
                Some(Value::String(text)) => Some(text.clone()),
                Some(Value::Object(detail)) => detail
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                _ => None,
            })
            .unwrap_or_else(|| outbound::excerpt(body));
        self.failed(format!("answered {status}: {message}"))
    }

    fn failed(&self, detail: impl Into<String>) -> UpstreamError {
        UpstreamError::new(FailureKind::Failed, &self.upstream, detail)
    }

    /// Whether a reply streams: its content type is the dialect's `stream_type`, or a stream was
    /// asked for and the reply does not say it is plain JSON.
    fn streams(&self, content_type: &str, stream_type: &str, sink: bool) -> bool {
        content_type == stream_type || ((self.stream || sink) && content_type != "application/json")
    }

    /// `bytes` read as a `T`, or a failure saying what they are not (`not_what`), with an excerpt.
    fn parse<T: DeserializeOwned>(&self, bytes: &[u8], not_what: &str) -> Result<T, UpstreamError> {
        serde_json::from_slice(bytes)
            .map_err(|e| self.failed(format!("{not_what} ({e}): {}", outbound::excerpt(bytes))))
    }

    /// A reply read whole: parsed (else `not_what`), made a reply by `finish`, and its text
    /// handed to the sink at once.
    async fn whole_reply<T: DeserializeOwned>(
        &self,
        reader: BodyReader,
        sink: Option<&mut AnswerSink>,
        not_what: &str,
        finish: fn(&ModelClient, T) -> Result<ModelReply, ChatError>,
    ) -> Result<ModelReply, ChatError> {
        let body = reader.read_to_end().await?;
        let reply = finish(self, self.parse(&body, not_what)?)?;
        if let Some(sink) = sink {
            sink.text(&reply.turn.content).await?;
            sink.end_of_reply().await?;
        }
        Ok(reply)
    }
}
