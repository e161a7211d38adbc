//! MCP over Streamable HTTP, dual-era per the spec's versioning rule: every request is first sent
//! stateless (`2026-07-28`: `_meta` envelope, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`);
//! a 400 without a modern error code means a legacy server, which then gets `initialize`,
//! `notifications/initialized` and a kept session (re-initialized once if the server forgets it).
//! Answers may be JSON or SSE.

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, header};
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use super::{
    Peer, initialize_request, initialize_result, legacy_meta, modern_meta, server_info_name,
    with_meta,
};
use crate::agent::outbound::{self, BodyReader, HttpClient};
use crate::agent::upstream_error::{FailureKind, UpstreamError};
use tracer_wire::agent_api::Upstream;
use tracer_wire::jsonrpc::{Message, Notification, Request, Response, code as rpc_code};
use tracer_wire::mcp::{self, Era, version};
use tracer_wire::stream::SseDecoder;
use tracer_wire::trace_context::TraceContext;

#[derive(Debug, Clone)]
struct LegacySession {
    id: Option<String>,
    version: String,
}

#[derive(Debug, Default)]
struct State {
    era: Option<Era>,
    session: Option<LegacySession>,
    server_name: Option<String>,
}

pub(super) struct HttpTransport {
    uri: Uri,
    http: HttpClient,
    timeout: Duration,
    peer: Peer,
    state: Mutex<State>,
}

/// One HTTP answer: its status, its session header, and the JSON-RPC response it carried.
struct Answer {
    status: StatusCode,
    session_id: Option<String>,
    response: Option<Response>,
    excerpt: String,
}

impl HttpTransport {
    pub(super) fn new(uri: Uri, http: HttpClient, timeout: Duration, upstream: Upstream) -> Self {
        Self {
            uri,
            http,
            timeout,
            peer: Peer::new(upstream),
            state: Mutex::new(State::default()),
        }
    }

    pub(super) fn upstream(&self) -> &Upstream {
        &self.peer.upstream
    }

    pub(super) async fn server_name(&self) -> Option<String> {
        self.state.lock().await.server_name.clone()
    }

    /// One request, whatever era the server turns out to be, within the MCP timeout.
    pub(super) async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        trace: &TraceContext,
    ) -> Result<Response, UpstreamError> {
        match tokio::time::timeout(self.timeout, self.request_any_era(method, &params, trace)).await
        {
            Ok(result) => result,
            Err(_) => Err(self.peer.error(
                FailureKind::Timeout,
                format!(
                    "{method} got no answer within {}",
                    outbound::seconds(self.timeout)
                ),
            )),
        }
    }

    async fn request_any_era(
        &self,
        method: &str,
        params: &Map<String, Value>,
        trace: &TraceContext,
    ) -> Result<Response, UpstreamError> {
        let era = self.state.lock().await.era;
        if era != Some(Era::Legacy) {
            let probing = era.is_none();
            if let Some(response) = self.send_modern(method, params, trace, probing).await? {
                let mut state = self.state.lock().await;
                state.era = Some(Era::Modern);
                if let Some(name) = response.result_value().and_then(result_server_name) {
                    state.server_name = Some(name);
                }
                return Ok(response);
            }
            self.state.lock().await.era = Some(Era::Legacy);
        }
        for attempt in 0..2 {
            let session = self.legacy_session(trace).await?;
            match self.send_legacy(method, params, trace, &session).await? {
                Some(response) => return Ok(response),
                None if attempt == 0 => self.state.lock().await.session = None,
                None => break,
            }
        }
        Err(self.peer.failed(format!(
            "{method}: the server forgot the session right after initialize"
        )))
    }

    /// A stateless request. `None` means the server is legacy and wants `initialize`; that is
    /// only concluded while `probing` (once a server has answered statelessly, a 400 is an
    /// error in its own right, not a sign of another era).
    async fn send_modern(
        &self,
        method: &str,
        params: &Map<String, Value>,
        trace: &TraceContext,
        probing: bool,
    ) -> Result<Option<Response>, UpstreamError> {
        let trace = trace.child();
        let request = Request::new(
            self.peer.id(),
            method,
            Some(with_meta(params, modern_meta(&trace))),
        );
        let mut headers = HeaderMap::new();
        for (name, value) in mcp::mirrored_headers(&request) {
            insert(&mut headers, name, &value);
        }
        let answer = self.post(&request, headers, &trace).await?;
        let error_code = answer
            .response
            .as_ref()
            .and_then(Response::error_object)
            .map(|e| e.code);
        match answer.status {
            status if status.is_success() => answer.response.map(Some).ok_or_else(|| {
                self.peer.failed(format!(
                    "{method} answered {status} without a JSON-RPC response"
                ))
            }),
            StatusCode::BAD_REQUEST => match error_code {
                Some(mcp::code::UNSUPPORTED_PROTOCOL_VERSION) => {
                    let supported = answer
                        .response
                        .as_ref()
                        .and_then(Response::error_object)
                        .and_then(|e| e.data.as_ref())
                        .and_then(|d| d.get("supported"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    let speaks_legacy = supported.as_array().is_some_and(|versions| {
                        versions
                            .iter()
                            .filter_map(Value::as_str)
                            .any(|v| version::LEGACY.contains(&v))
                    });
                    if speaks_legacy {
                        Ok(None)
                    } else {
                        Err(self.peer.failed(format!(
                            "the server does not support {} (it supports {supported})",
                            version::V2026_07_28
                        )))
                    }
                }
                Some(code) if mcp::code::is_modern_error(code) => Ok(answer.response),
                _ if probing => Ok(None),
                Some(_) => Ok(answer.response),
                None => Err(self
                    .peer
                    .failed(format!("{method} answered 400: {}", answer.excerpt))),
            },
            StatusCode::NOT_FOUND if error_code == Some(rpc_code::METHOD_NOT_FOUND) => {
                Ok(answer.response)
            }
            status => Err(self
                .peer
                .failed(format!("{method} answered {status}: {}", answer.excerpt))),
        }
    }

    /// A request in the session. `None` means the session is gone (404): initialize again.
    async fn send_legacy(
        &self,
        method: &str,
        params: &Map<String, Value>,
        trace: &TraceContext,
        session: &LegacySession,
    ) -> Result<Option<Response>, UpstreamError> {
        let trace = trace.child();
        let request = Request::new(
            self.peer.id(),
            method,
            Some(with_meta(params, legacy_meta(&trace))),
        );
        let answer = self
            .post(&request, session_headers(session), &trace)
            .await?;
        match (answer.status, answer.response) {
            (StatusCode::NOT_FOUND, _) if session.id.is_some() => Ok(None),
            (status, Some(response))
                if status.is_success() || status == StatusCode::BAD_REQUEST =>
            {
                Ok(Some(response))
            }
            (status, _) => Err(self
                .peer
                .failed(format!("{method} answered {status}: {}", answer.excerpt))),
        }
    }

    /// The kept session, or a new one from `initialize` + `notifications/initialized`.
    async fn legacy_session(&self, trace: &TraceContext) -> Result<LegacySession, UpstreamError> {
        let mut state = self.state.lock().await;
        if let Some(session) = &state.session {
            return Ok(session.clone());
        }
        let init_trace = trace.child();
        let request = initialize_request(self.peer.id(), &init_trace);
        let answer = self.post(&request, HeaderMap::new(), &init_trace).await?;
        // A JSON-RPC error speaks for itself whatever the status; a result needs a 2xx.
        let init = match answer.response {
            Some(response) if answer.status.is_success() || response.result_value().is_none() => {
                initialize_result(response, |detail| self.peer.failed(detail))?
            }
            _ => {
                return Err(self.peer.failed(format!(
                    "initialize answered {}: {}",
                    answer.status, answer.excerpt
                )));
            }
        };
        let session = LegacySession {
            id: answer.session_id,
            version: init.protocol_version,
        };
        let note_trace = trace.child();
        let initialized = Notification::new(mcp::method::INITIALIZED, None);
        let note = self
            .post(&initialized, session_headers(&session), &note_trace)
            .await?;
        if !note.status.is_success() {
            return Err(self.peer.failed(format!(
                "notifications/initialized answered {}: {}",
                note.status, note.excerpt
            )));
        }
        state.server_name = Some(init.server_info.name);
        state.session = Some(session.clone());
        Ok(session)
    }

    /// POSTs one JSON-RPC message and reads the response: a JSON body, or the SSE event that
    /// answers it (notifications and server requests on the stream are skipped).
    async fn post(
        &self,
        message: &impl serde::Serialize,
        mut headers: HeaderMap,
        trace: &TraceContext,
    ) -> Result<Answer, UpstreamError> {
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        let body = serde_json::to_vec(message).unwrap_or_default();
        let request = outbound::json_post(&self.uri, body, trace, headers);
        let response =
            outbound::send(&self.http, request, self.timeout, &self.peer.upstream).await?;
        let status = response.status();
        let session_id = response
            .headers()
            .get(mcp::header::SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let content_type = outbound::content_type(response.headers());
        let mut reader = BodyReader::new(response.into_body(), self.timeout, &self.peer.upstream);
        if content_type != "text/event-stream" {
            let body = reader.read_to_end().await?;
            let response = serde_json::from_slice::<Response>(&body).ok();
            return Ok(Answer {
                status,
                session_id,
                response,
                excerpt: outbound::excerpt(&body),
            });
        }
        let mut decoder = SseDecoder::new();
        while let Some(events) = reader.next_records(&mut decoder).await? {
            for event in events {
                if let Ok(Message::Response(response)) =
                    serde_json::from_str::<Message>(&event.data)
                {
                    return Ok(Answer {
                        status,
                        session_id,
                        response: Some(response),
                        excerpt: String::new(),
                    });
                }
            }
        }
        Ok(Answer {
            status,
            session_id,
            response: None,
            excerpt: "an event stream that ended without a JSON-RPC response".to_string(),
        })
    }
}

fn result_server_name(result: &Value) -> Option<String> {
    server_info_name(result.get("_meta").and_then(Value::as_object))
}

fn session_headers(session: &LegacySession) -> HeaderMap {
    let mut headers = HeaderMap::new();
    insert(
        &mut headers,
        mcp::header::PROTOCOL_VERSION,
        &session.version,
    );
    if let Some(id) = &session.id {
        insert(&mut headers, mcp::header::SESSION_ID, id);
    }
    headers
}

fn insert(headers: &mut HeaderMap, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(HeaderName::from_static(name), value);
    }
}
