//! Streamable HTTP for the notes server (and any other [`ToolServer`], e.g. `tracer mcp`): one
//! endpoint, `POST /mcp` (DELETE ends a legacy session), with the Origin check, the body cap, era
//! routing (legacy sessions or modern stateless requests) and JSON or SSE answers.

use super::origin::is_local_origin;
use ::http::header::{ACCEPT, ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, ORIGIN};
use ::http::{HeaderMap, HeaderValue, Method, StatusCode};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use serde::Serialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tracer_serve::{Shutdown, serve_http};
use tracer_wire::jsonrpc::{
    Body, ErrorObject, InvalidMessage, Message, Request, RequestId, Response, code, parse_body,
};
use tracer_wire::mcp::server::{ModernHeaders, ToolServer};
use tracer_wire::mcp::{self, Era, header, method, version};

/// The one MCP endpoint path.
const ENDPOINT: &str = "/mcp";

type HttpResponse = ::http::Response<Full<Bytes>>;

/// How long open connections get to finish after a stop request.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves MCP over HTTP on `listener` until `shutdown` asks, then lets open connections finish
/// (up to [`SHUTDOWN_GRACE`]).
pub async fn serve<S: ToolServer + 'static>(
    listener: TcpListener,
    server: Arc<S>,
    shutdown: impl Into<Shutdown>,
) -> std::io::Result<()> {
    let make_service = move |_peer| {
        let server = Arc::clone(&server);
        service_fn(move |request| {
            let server = Arc::clone(&server);
            async move { Ok::<_, Infallible>(handle(server.as_ref(), request).await) }
        })
    };
    serve_http(listener, make_service, shutdown, SHUTDOWN_GRACE).await;
    Ok(())
}

/// Answers one HTTP request.
pub(crate) async fn handle<S: ToolServer>(
    server: &S,
    request: ::http::Request<Incoming>,
) -> HttpResponse {
    let (parts, body) = request.into_parts();
    tracing::debug!(method = %parts.method, path = %parts.uri.path(), "request");
    if let Some(origin) = parts.headers.get(ORIGIN) {
        let origin = origin.to_str().unwrap_or("(not ASCII)");
        if !is_local_origin(origin) {
            let message = format!("Forbidden: Origin {origin} is not a localhost origin");
            return error_reply(StatusCode::FORBIDDEN, None, http_error(message));
        }
    }
    if parts.uri.path() != ENDPOINT {
        let message = format!(
            "Not Found: {}; the MCP endpoint is POST {ENDPOINT}",
            parts.uri.path()
        );
        return error_reply(StatusCode::NOT_FOUND, None, http_error(message));
    }
    match parts.method {
        Method::POST => {
            let limit = server.max_body_bytes();
            match read_body(&parts.headers, body, limit).await {
                Ok(bytes) => post(server, &parts.headers, &bytes).await,
                Err(reply) => reply,
            }
        }
        Method::DELETE => delete(server, &parts.headers),
        other => method_not_allowed(&other),
    }
}

async fn read_body(
    headers: &HeaderMap,
    body: Incoming,
    limit: usize,
) -> Result<Bytes, HttpResponse> {
    let too_large = || {
        let message = format!("Request body is larger than the limit of {limit} bytes");
        error_reply(StatusCode::PAYLOAD_TOO_LARGE, None, http_error(message))
    };
    let declared = header_str(headers, CONTENT_LENGTH.as_str()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => Err(too_large()),
        Err(error) => {
            let message = format!("could not read the request body: {error}");
            Err(error_reply(
                StatusCode::BAD_REQUEST,
                None,
                http_error(message),
            ))
        }
    }
}

async fn post<S: ToolServer>(server: &S, headers: &HeaderMap, bytes: &[u8]) -> HttpResponse {
    let message = match parse_body(bytes) {
        Err(error) => return error_reply(StatusCode::BAD_REQUEST, None, error),
        Ok(Body::Single(Err(invalid))) => {
            return error_reply(StatusCode::BAD_REQUEST, invalid.id, invalid.error);
        }
        Ok(Body::Batch(items)) => return batch(server, headers, items).await,
        Ok(Body::Single(Ok(message))) => message,
    };
    let session_id = header_str(headers, header::SESSION_ID);
    if let Message::Request(request) = &message
        && request.method == method::INITIALIZE
    {
        let initialized = server.initialize(request);
        let Some(negotiated) = initialized.version else {
            return json_reply(StatusCode::OK, &initialized.response);
        };
        let id = server.sessions().create(&negotiated);
        tracing::info!(session = %id, version = %negotiated, "legacy session started");
        let mut reply = success_reply(server, headers, &initialized.response);
        if let Ok(value) = HeaderValue::from_str(&id) {
            reply.headers_mut().insert(header::SESSION_ID, value);
        }
        return reply;
    }
    match request_era(&message, headers) {
        Era::Modern => modern(server, headers, message).await,
        Era::Legacy => match session_id {
            Some(id) => legacy(server, headers, id, message).await,
            None => {
                let message_text = "Bad Request: missing Mcp-Session-Id header; send initialize \
                    first (protocol 2025-11-25 and older) or a 2026-07-28 request with params._meta";
                let id = request_id(&message);
                error_reply(StatusCode::BAD_REQUEST, id, http_error(message_text))
            }
        },
    }
}

/// Modern when the body carries a `_meta` protocol version, or when there is no session and the
/// headers speak 2026-07-28 (`Mcp-Method`, or a non-legacy `MCP-Protocol-Version`).
fn request_era(message: &Message, headers: &HeaderMap) -> Era {
    let params = match message {
        Message::Request(request) => request.params.as_ref(),
        Message::Notification(notification) => notification.params.as_ref(),
        Message::Response(_) => None,
    };
    if params.and_then(mcp::meta_protocol_version).is_some() {
        return Era::Modern;
    }
    if header_str(headers, header::SESSION_ID).is_some() {
        return Era::Legacy;
    }
    let version_header = header_str(headers, header::PROTOCOL_VERSION);
    let legacy_version = version_header.is_some_and(|v| version::LEGACY.contains(&v));
    if headers.contains_key(header::METHOD) || (version_header.is_some() && !legacy_version) {
        Era::Modern
    } else {
        Era::Legacy
    }
}

async fn modern<S: ToolServer>(server: &S, headers: &HeaderMap, message: Message) -> HttpResponse {
    match message {
        Message::Request(request) => {
            let mirrored = ModernHeaders {
                protocol_version: header_str(headers, header::PROTOCOL_VERSION).map(str::to_owned),
                method: header_str(headers, header::METHOD).map(str::to_owned),
                name: header_str(headers, header::NAME).map(str::to_owned),
            };
            let answer = server.modern_request(&request, Some(&mirrored)).await;
            if answer.status == StatusCode::OK {
                success_reply(server, headers, &answer.response)
            } else {
                json_reply(answer.status, &answer.response)
            }
        }
        Message::Notification(_) => accepted(),
        Message::Response(response) => {
            let error =
                ErrorObject::invalid_request("clients must not POST responses in 2026-07-28");
            error_reply(StatusCode::BAD_REQUEST, response.id, error)
        }
    }
}

async fn legacy<S: ToolServer>(
    server: &S,
    headers: &HeaderMap,
    session_id: &str,
    message: Message,
) -> HttpResponse {
    let Some(negotiated) = server.sessions().touch(session_id) else {
        return session_not_found(session_id, request_id(&message));
    };
    if let Some(requested) = header_str(headers, header::PROTOCOL_VERSION)
        && !version::LEGACY.contains(&requested)
    {
        let message_text = format!(
            "Bad Request: unsupported MCP-Protocol-Version {requested} (this session uses {negotiated})"
        );
        let error = http_error(message_text);
        return error_reply(StatusCode::BAD_REQUEST, request_id(&message), error);
    }
    match message {
        Message::Request(request) => {
            let response = server.legacy_request(&request).await;
            success_reply(server, headers, &response)
        }
        Message::Notification(_) | Message::Response(_) => accepted(),
    }
}

/// A JSON-RPC batch: only for a legacy session that negotiated 2025-03-26.
async fn batch<S: ToolServer>(
    server: &S,
    headers: &HeaderMap,
    items: Vec<Result<Message, InvalidMessage>>,
) -> HttpResponse {
    let session = header_str(headers, header::SESSION_ID);
    let negotiated = match session {
        Some(id) => match server.sessions().touch(id) {
            Some(negotiated) => Some(negotiated),
            None => return session_not_found(id, None),
        },
        None => None,
    };
    if negotiated.as_deref() != Some(version::V2025_03_26) {
        let error = ErrorObject::invalid_request(
            "JSON-RPC batches are only allowed in a 2025-03-26 session; send one message per POST",
        );
        return error_reply(StatusCode::BAD_REQUEST, None, error);
    }
    let mut responses = Vec::new();
    for item in items {
        match item {
            Err(invalid) => responses.push(invalid.into_response()),
            Ok(Message::Request(request)) if request.method == method::INITIALIZE => {
                let error = ErrorObject::invalid_request("initialize must not be part of a batch");
                responses.push(Response::error(Some(request.id), error));
            }
            Ok(Message::Request(request)) => responses.push(server.legacy_request(&request).await),
            Ok(Message::Notification(_) | Message::Response(_)) => {}
        }
    }
    if responses.is_empty() {
        accepted()
    } else {
        success_reply(server, headers, &responses)
    }
}

fn delete<S: ToolServer>(server: &S, headers: &HeaderMap) -> HttpResponse {
    let Some(id) = header_str(headers, header::SESSION_ID) else {
        return method_not_allowed(&Method::DELETE);
    };
    if server.sessions().end(id) {
        tracing::info!(session = %id, "legacy session ended");
        status_only(StatusCode::OK)
    } else {
        session_not_found(id, None)
    }
}

fn request_id(message: &Message) -> Option<RequestId> {
    match message {
        Message::Request(Request { id, .. }) => Some(id.clone()),
        _ => None,
    }
}

fn session_not_found(id: &str, request: Option<RequestId>) -> HttpResponse {
    let message = format!("Session not found: {id} (unknown or expired); send initialize again");
    error_reply(StatusCode::NOT_FOUND, request, http_error(message))
}

fn method_not_allowed(method: &Method) -> HttpResponse {
    let message = format!(
        "Method Not Allowed: {method}; the MCP endpoint takes POST (and DELETE with Mcp-Session-Id \
         to end a legacy session)"
    );
    let mut reply = error_reply(StatusCode::METHOD_NOT_ALLOWED, None, http_error(message));
    reply
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static("POST, DELETE"));
    reply
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// A 200 answer: SSE when `--sse` is on and the client accepts it, JSON otherwise.
fn success_reply<S: ToolServer>(
    server: &S,
    headers: &HeaderMap,
    body: &impl Serialize,
) -> HttpResponse {
    let accepts_sse = header_str(headers, ACCEPT.as_str())
        .is_none_or(|accept| accept.contains("text/event-stream") || accept.contains("*/*"));
    if !(server.sse() && accepts_sse) {
        return json_reply(StatusCode::OK, body);
    }
    let json = serde_json::to_string(body).unwrap_or_else(|_| "null".to_owned());
    let mut reply = ::http::Response::new(Full::new(Bytes::from(format!(
        "event: message\ndata: {json}\n\n"
    ))));
    let headers = reply.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    reply
}

fn json_reply(status: StatusCode, body: &impl Serialize) -> HttpResponse {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"null".to_vec());
    let mut reply = ::http::Response::new(Full::new(Bytes::from(bytes)));
    *reply.status_mut() = status;
    reply
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    reply
}

fn error_reply(status: StatusCode, id: Option<RequestId>, error: ErrorObject) -> HttpResponse {
    tracing::debug!(%status, code = error.code, "{}", error.message);
    json_reply(status, &Response::error(id, error))
}

/// A -32600 error for a request refused at the HTTP level (the message says why).
fn http_error(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(code::INVALID_REQUEST, message)
}

fn accepted() -> HttpResponse {
    status_only(StatusCode::ACCEPTED)
}

fn status_only(status: StatusCode) -> HttpResponse {
    let mut reply = ::http::Response::new(Full::new(Bytes::new()));
    *reply.status_mut() = status;
    reply
}
