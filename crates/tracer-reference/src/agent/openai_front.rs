//! The agent as an OpenAI-compatible model: `POST /v1/chat/completions` (whole, or SSE with the
//! answer's tokens sent as the model produces them) and `GET /v1/models`, so any chat client can
//! drive the loop. The answer ends with `Tools used: ...`. The client's system messages are
//! dropped (the agent's own system prompt applies) and so are its tool messages.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::BodyExt;
use tokio::sync::mpsc;

use super::agent_loop::{Agent, RunError, RunOutput};
use super::conversation::{AssistantTurn, Turn};
use super::model_client::AnswerSink;
use super::replies::{ChannelBody, HttpResponse, bad_request, json, run_error};
use tracer_wire::ids::random_hex_id;
use tracer_wire::openai::{
    ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatMessage, Choice, ChunkChoice,
    Delta, ModelList, ModelObject, STREAM_DONE, Usage,
};
use tracer_wire::trace_context::TraceContext;

pub(crate) const CHAT_COMPLETIONS: &str = "/v1/chat/completions";
pub(crate) const MODELS: &str = "/v1/models";

/// `GET /v1/models`: the one model behind the agent.
pub(crate) fn models(agent: &Agent) -> HttpResponse {
    let list = ModelList {
        object: "list".to_string(),
        data: vec![ModelObject {
            id: agent.model().model().to_string(),
            object: "model".to_string(),
            created: unix_now(),
            owned_by: "notes-agent".to_string(),
        }],
    };
    json(StatusCode::OK, &list)
}

/// `POST /v1/chat/completions`.
pub(crate) async fn chat_completions(
    agent: Arc<Agent>,
    body: &[u8],
    trace: TraceContext,
) -> HttpResponse {
    let request: ChatCompletionRequest = match serde_json::from_slice(body) {
        Ok(request) => request,
        Err(e) => return bad_request(format!("the body is not a chat completion request: {e}")),
    };
    let conversation = conversation(&request.messages);
    if !conversation
        .iter()
        .any(|turn| matches!(turn, Turn::User(_)))
    {
        return bad_request("`messages` has no user message with text".to_string());
    }
    let include_usage = request
        .stream_options
        .as_ref()
        .and_then(|o| o.include_usage)
        .unwrap_or(false);
    if request.stream.unwrap_or(false) {
        return stream_reply(agent, conversation, trace, include_usage).await;
    }
    match agent.run(conversation, &trace, None).await {
        Err(error) => run_error(error),
        Ok(output) => {
            let message = ChatMessage {
                reasoning: output.reply.thinking.clone(),
                ..ChatMessage::text(
                    "assistant",
                    format!("{}{}", output.reply.reply, footer(&output)),
                )
            };
            let completion = ChatCompletion {
                id: completion_id(),
                object: "chat.completion".to_string(),
                created: unix_now(),
                model: output.reply.model.clone(),
                choices: vec![Choice {
                    index: 0,
                    message,
                    finish_reason: Some("stop".to_string()),
                }],
                usage: Some(usage(&output)),
                system_fingerprint: None,
            };
            json(StatusCode::OK, &completion)
        }
    }
}

/// The client's user and assistant turns, as text; system and tool messages are dropped.
fn conversation(messages: &[ChatMessage]) -> Vec<Turn> {
    messages
        .iter()
        .filter_map(|message| {
            let text = message.content_text();
            match message.role.as_str() {
                "user" if !text.trim().is_empty() => Some(Turn::User(text)),
                "assistant" if !text.trim().is_empty() => Some(Turn::Assistant(AssistantTurn {
                    content: text,
                    ..AssistantTurn::default()
                })),
                _ => None,
            }
        })
        .collect()
}

/// Streams the answer. The status is decided by what happens first: text from the model
/// (200 and SSE from then on) or the end of the run without text (a failure becomes the
/// 502/504 JSON error; a success still streams, with just the footer).
async fn stream_reply(
    agent: Arc<Agent>,
    conversation: Vec<Turn>,
    trace: TraceContext,
    include_usage: bool,
) -> HttpResponse {
    let model = agent.model().model().to_string();
    let (text_tx, mut text_rx) = mpsc::channel::<String>(64);
    let mut run = tokio::spawn(async move {
        agent
            .run(conversation, &trace, Some(AnswerSink::new(text_tx)))
            .await
    });
    // `None` means the run ended (and dropped its sink) without sending any text.
    let first_text = text_rx.recv().await;
    let mut finished = None;
    if first_text.is_none() {
        match (&mut run).await {
            Ok(Err(error)) => return run_error(error),
            Ok(Ok(output)) => finished = Some(Ok(output)),
            Err(join) => return run_error(RunError::Upstream(internal(join))),
        }
    }
    let (body_tx, body_rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let mut stream = StreamWriter::new(body_tx, model);
        if stream.role_chunk().await.is_err() {
            return;
        }
        let outcome = match finished {
            Some(outcome) => outcome,
            None => {
                let mut next = first_text;
                while let Some(text) = next {
                    if stream.content(&text).await.is_err() {
                        return; // the client left; dropping text_rx stops the run
                    }
                    next = text_rx.recv().await;
                }
                match run.await {
                    Ok(result) => result,
                    Err(join) => Err(RunError::Upstream(internal(join))),
                }
            }
        };
        let _ = stream.finish(outcome, include_usage).await;
    });
    sse_body_response(body_rx)
}

fn sse_body_response(rx: mpsc::Receiver<Bytes>) -> HttpResponse {
    let mut response = Response::new(ChannelBody::new(rx).boxed());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// Writes `chat.completion.chunk` events with one id and creation time.
struct StreamWriter {
    tx: mpsc::Sender<Bytes>,
    id: String,
    created: u64,
    model: String,
}

impl StreamWriter {
    /// `model` is the configured one until the model server names itself at the end.
    fn new(tx: mpsc::Sender<Bytes>, model: String) -> Self {
        Self {
            tx,
            id: completion_id(),
            created: unix_now(),
            model,
        }
    }

    async fn role_chunk(&mut self) -> Result<(), ()> {
        let delta = Delta {
            role: Some("assistant".to_string()),
            content: Some(String::new()),
            ..Delta::default()
        };
        self.chunk(delta, None, None).await
    }

    async fn content(&mut self, text: &str) -> Result<(), ()> {
        let delta = Delta {
            content: Some(text.to_string()),
            ..Delta::default()
        };
        self.chunk(delta, None, None).await
    }

    /// The footer, the finish chunk, the usage chunk if asked, and `[DONE]`; or the error.
    async fn finish(
        &mut self,
        outcome: Result<RunOutput, RunError>,
        include_usage: bool,
    ) -> Result<(), ()> {
        let output = match outcome {
            Ok(output) => output,
            Err(RunError::ClientGone) => return Err(()),
            Err(RunError::Upstream(error)) => {
                let body = serde_json::to_string(&error.body()).unwrap_or_default();
                return self.event(&body).await;
            }
        };
        self.model.clone_from(&output.reply.model);
        self.content(&footer(&output)).await?;
        self.chunk(Delta::default(), Some("stop".to_string()), None)
            .await?;
        if include_usage {
            let chunk = ChatCompletionChunk {
                id: self.id.clone(),
                object: "chat.completion.chunk".to_string(),
                created: self.created,
                model: self.model.clone(),
                choices: Vec::new(),
                usage: Some(usage(&output)),
                error: None,
            };
            self.event(&serde_json::to_string(&chunk).unwrap_or_default())
                .await?;
        }
        self.event(STREAM_DONE).await
    }

    async fn chunk(
        &mut self,
        delta: Delta,
        finish_reason: Option<String>,
        usage: Option<Usage>,
    ) -> Result<(), ()> {
        let chunk = ChatCompletionChunk {
            id: self.id.clone(),
            object: "chat.completion.chunk".to_string(),
            created: self.created,
            model: self.model.clone(),
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                finish_reason,
            }],
            usage,
            error: None,
        };
        self.event(&serde_json::to_string(&chunk).unwrap_or_default())
            .await
    }

    async fn event(&mut self, data: &str) -> Result<(), ()> {
        let frame = Bytes::from(format!("data: {data}\n\n"));
        self.tx.send(frame).await.map_err(|_| ())
    }
}

/// `\n\n---\nTools used: a, b` (each tool once, in the order first used), or `none`.
fn footer(output: &RunOutput) -> String {
    let mut names: Vec<&str> = Vec::new();
    for call in &output.reply.tool_calls {
        if !names.contains(&call.name.as_str()) {
            names.push(&call.name);
        }
    }
    let used = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    format!("\n\n---\nTools used: {used}")
}

fn usage(output: &RunOutput) -> Usage {
    Usage {
        prompt_tokens: output.prompt_tokens,
        completion_tokens: output.completion_tokens,
        total_tokens: output.prompt_tokens + output.completion_tokens,
    }
}

fn internal(join: tokio::task::JoinError) -> super::upstream_error::UpstreamError {
    super::upstream_error::UpstreamError::new(
        super::upstream_error::FailureKind::Failed,
        &tracer_wire::agent_api::Upstream {
            role: "agent".to_string(),
            name: "notes-agent".to_string(),
            address: "in process".to_string(),
        },
        format!("the agent loop stopped: {join}"),
    )
}

fn completion_id() -> String {
    format!("chatcmpl-{}", random_hex_id(12))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
