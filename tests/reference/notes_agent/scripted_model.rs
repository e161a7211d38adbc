//! A scripted model server for the tests: it answers set replies in the Ollama or OpenAI dialect
//! (whole, or streamed as NDJSON / SSE when asked), records every request, and checks each one
//! against the conversation so far: the whole history resent, the model's own turn replayed, one
//! tool message per call shaped as the API wants. A failed check is answered with HTTP 500 and
//! says what was wrong, so the agent's 502 carries it into the test's failure message.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc};
use tracer_reference::agent::replies::ChannelBody;

use super::scripted_checks::check_request;
use super::scripted_replies::{ollama_lines, ollama_whole, openai_events, openai_whole};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Ollama,
    OpenAi,
}

/// One tool call the script makes the model ask for.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// Sent as an object (Ollama) or as this JSON text (OpenAI).
    pub arguments: Value,
    /// For OpenAI: send exactly this text instead (e.g. broken JSON).
    pub raw_arguments: Option<String>,
}

/// One scripted model reply.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub content: String,
    pub thinking: Option<String>,
    pub calls: Vec<Call>,
    /// When streaming: after the first content piece, wait for this before sending the rest.
    pub gate: Option<Arc<Notify>>,
    /// Never answer (to test timeouts).
    pub hang: bool,
}

impl Reply {
    pub fn text(content: &str) -> Self {
        Self {
            content: content.to_string(),
            ..Self::default()
        }
    }

    pub fn call(name: &str, arguments: Value) -> Self {
        Self::default().and_call(name, arguments)
    }

    pub fn and_call(mut self, name: &str, arguments: Value) -> Self {
        let id = format!("call_{}{}", name.len(), self.calls.len());
        self.calls.push(Call {
            id,
            name: name.to_string(),
            arguments,
            raw_arguments: None,
        });
        self
    }

    /// Sends the calls without ids, as the article's Ollama did.
    pub fn without_ids(mut self) -> Self {
        for call in &mut self.calls {
            call.id.clear();
        }
        self
    }

    pub fn thinking(mut self, thinking: &str) -> Self {
        self.thinking = Some(thinking.to_string());
        self
    }
}

/// A request the scripted model received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Default)]
struct Script {
    replies: Vec<Reply>,
    next: usize,
    received: Vec<Received>,
    /// The last request and the reply it got, for checking the next request.
    last: Option<(Value, Reply)>,
}

pub struct ScriptedModel {
    /// The base URL the agent is given (`…/v1` for OpenAI).
    pub base_url: String,
    script: Arc<Mutex<Script>>,
}

impl ScriptedModel {
    pub async fn start(dialect: Dialect, replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let script = Arc::new(Mutex::new(Script {
            replies,
            ..Script::default()
        }));
        let shared = script.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let script = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let script = script.clone();
                        async move { Ok::<_, Infallible>(answer(dialect, &script, request).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        let base_url = match dialect {
            Dialect::Ollama => format!("http://{address}"),
            Dialect::OpenAi => format!("http://{address}/v1"),
        };
        Self { base_url, script }
    }

    pub fn received(&self) -> Vec<Received> {
        self.script.lock().unwrap().received.clone()
    }

    pub fn replies_left(&self) -> usize {
        let script = self.script.lock().unwrap();
        script.replies.len() - script.next
    }
}

type Body = BoxBody<Bytes, Infallible>;

async fn answer(
    dialect: Dialect,
    script: &Mutex<Script>,
    request: Request<Incoming>,
) -> Response<Body> {
    let path = request.uri().path().to_string();
    let headers = request.headers().clone();
    let bytes = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let expected_path = match dialect {
        Dialect::Ollama => "/api/chat",
        Dialect::OpenAi => "/v1/chat/completions",
    };
    let body: Value = match serde_json::from_slice(&bytes) {
        Ok(body) => body,
        Err(e) => return error(format!("scripted model: the body is not JSON: {e}")),
    };
    let reply = {
        let mut script = script.lock().unwrap();
        script.received.push(Received {
            path: path.clone(),
            headers,
            body: body.clone(),
        });
        if path != expected_path {
            return error(format!(
                "scripted model: wrong path {path}, expected {expected_path}"
            ));
        }
        if let Err(problem) = check_request(dialect, script.last.as_ref(), &body) {
            return error(format!("scripted model: {problem}"));
        }
        let Some(reply) = script.replies.get(script.next).cloned() else {
            return error("scripted model: the script has no more replies".to_string());
        };
        script.next += 1;
        script.last = Some((body.clone(), reply.clone()));
        reply
    };
    if reply.hang {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let stream = body["stream"]
        .as_bool()
        .unwrap_or(dialect == Dialect::Ollama);
    let model = body["model"].as_str().unwrap_or("?").to_string();
    match (dialect, stream) {
        (Dialect::Ollama, false) => whole(ollama_whole(&model, &reply)),
        (Dialect::OpenAi, false) => whole(openai_whole(&model, &reply)),
        (Dialect::Ollama, true) => streamed(
            "application/x-ndjson",
            ollama_lines(&model, &reply),
            reply.gate,
        ),
        (Dialect::OpenAi, true) => {
            let include_usage = body["stream_options"]["include_usage"] == true;
            streamed(
                "text/event-stream",
                openai_events(&model, &reply, include_usage),
                reply.gate,
            )
        }
    }
}

fn error(message: String) -> Response<Body> {
    let mut response = whole(json!({"error": message}));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
}

fn whole(value: Value) -> Response<Body> {
    Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(value.to_string())).boxed())
        .unwrap()
}

/// Sends `pieces` one by one; the first piece that carries content is followed by the gate.
fn streamed(
    content_type: &str,
    pieces: Vec<(String, bool)>,
    gate: Option<Arc<Notify>>,
) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Bytes>(4);
    tokio::spawn(async move {
        let mut gate = gate;
        for (piece, has_content) in pieces {
            if tx.send(Bytes::from(piece)).await.is_err() {
                return;
            }
            if has_content && let Some(gate) = gate.take() {
                gate.notified().await;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    });
    Response::builder()
        .header("content-type", content_type)
        .body(ChannelBody::new(rx).boxed())
        .unwrap()
}
