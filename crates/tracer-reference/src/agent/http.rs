//! The agent's HTTP front: the listener, routing, `POST /agent`, and the JSON error replies
//! (400/404/405/413 for bad requests, 502/504 naming the upstream that failed; built in
//! `replies`). The OpenAI-compatible routes live in `openai_front`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::net::TcpListener;

use super::agent_loop::Agent;
use super::conversation::Turn;
use super::openai_front;
use tracer_serve::{Shutdown, serve_http};
use tracer_wire::agent_api::{AGENT_PATH, AgentRequest, ErrorKind};
use tracer_wire::trace_context::{TRACEPARENT, TRACESTATE, TraceContext};

pub(crate) use super::replies::HttpResponse;
use super::replies::{bad_request, error, json, read_body, run_error};

/// How long a stdio MCP server gets to exit after its stdin is closed, before it is killed.
const STDIO_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How long open requests get to finish after a stop request (a model answer can be slow).
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Accepts connections until `shutdown` asks, lets open requests finish (up to
/// [`SHUTDOWN_GRACE`]), then closes the stdio MCP servers politely.
pub(crate) async fn serve_until(
    listener: TcpListener,
    agent: Arc<Agent>,
    shutdown: impl Into<Shutdown>,
) -> std::io::Result<()> {
    let serving = agent.clone();
    let make_service = move |_peer| {
        let agent = serving.clone();
        service_fn(move |request| {
            let agent = agent.clone();
            async move { Ok::<_, Infallible>(handle(agent, request).await) }
        })
    };
    serve_http(listener, make_service, shutdown, SHUTDOWN_GRACE).await;
    // stdio servers get their stdin closed and time to exit, as the spec asks.
    agent.shutdown(STDIO_SHUTDOWN_GRACE).await;
    Ok(())
}

async fn handle(agent: Arc<Agent>, request: Request<Incoming>) -> HttpResponse {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let header_text = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let trace = TraceContext::continue_or_start(
        header_text(TRACEPARENT).as_deref(),
        header_text(TRACESTATE).as_deref(),
    );
    let response = match (&method, path.as_str()) {
        (&Method::POST, AGENT_PATH) => match read_body(request.into_body()).await {
            Ok(body) => agent_endpoint(&agent, &body, &trace).await,
            Err(response) => response,
        },
        (&Method::POST, openai_front::CHAT_COMPLETIONS) => {
            match read_body(request.into_body()).await {
                Ok(body) => openai_front::chat_completions(agent, &body, trace.clone()).await,
                Err(response) => response,
            }
        }
        (&Method::GET, openai_front::MODELS) => openai_front::models(&agent),
        (&Method::GET | &Method::HEAD, "/") => text(StatusCode::OK, "notes-agent is running\n"),
        (_, AGENT_PATH | openai_front::CHAT_COMPLETIONS | openai_front::MODELS) => error(
            StatusCode::METHOD_NOT_ALLOWED,
            ErrorKind::MethodNotAllowed,
            format!("{method} is not allowed on {path}"),
        ),
        _ => error(
            StatusCode::NOT_FOUND,
            ErrorKind::NotFound,
            format!(
                "no route {path}; try POST {AGENT_PATH}, POST {} or GET {}",
                openai_front::CHAT_COMPLETIONS,
                openai_front::MODELS
            ),
        ),
    };
    tracing::info!(
        %method,
        %path,
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis() as u64,
        trace_id = %trace.parent.trace_id_hex(),
        "request"
    );
    response
}

/// `POST /agent {"message": ...}`.
async fn agent_endpoint(agent: &Agent, body: &[u8], trace: &TraceContext) -> HttpResponse {
    let request: AgentRequest = match serde_json::from_slice(body) {
        Ok(request) => request,
        Err(e) => {
            return bad_request(format!(
                "the body must be a JSON object like {{\"message\": \"Add buy milk to my notes\"}}: {e}"
            ));
        }
    };
    if request.message.trim().is_empty() {
        return bad_request("`message` is empty: say what the agent should do".to_string());
    }
    match agent
        .run(vec![Turn::User(request.message)], trace, None)
        .await
    {
        Ok(output) => json(StatusCode::OK, &output.reply),
        Err(error) => run_error(error),
    }
}

fn text(status: StatusCode, body: &'static str) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
