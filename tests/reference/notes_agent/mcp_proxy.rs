//! A recording front for an MCP server in the tests: it records each request's headers and body
//! and forwards it. In legacy mode it behaves like a handshake-era server (mcp 1.x): a request
//! that is not `initialize` and carries no `Mcp-Session-Id` gets `400` "Missing session ID".
//! It can also answer every `tools/call` with a set JSON-RPC error (a protocol error).

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// One request that went through the proxy.
#[derive(Debug, Clone)]
pub struct Seen {
    pub headers: HeaderMap,
    pub body: Value,
    pub status: u16,
}

impl Seen {
    pub fn method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub struct McpProxy {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// How the proxy behaves besides forwarding.
#[derive(Debug, Clone, Default)]
pub struct Behaviour {
    pub legacy_only: bool,
    /// Answer every tools/call with this JSON-RPC error object.
    pub call_error: Option<Value>,
}

impl McpProxy {
    pub async fn start(upstream: &str, legacy_only: bool) -> Self {
        Self::start_with(
            upstream,
            Behaviour {
                legacy_only,
                call_error: None,
            },
        )
        .await
    }

    pub async fn start_with(upstream: &str, behaviour: Behaviour) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let client: Client<HttpConnector, Full<Bytes>> =
            Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let upstream = upstream.to_string();
        let record = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (client, upstream, record, behaviour) = (
                    client.clone(),
                    upstream.clone(),
                    record.clone(),
                    behaviour.clone(),
                );
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let (client, upstream, record, behaviour) = (
                            client.clone(),
                            upstream.clone(),
                            record.clone(),
                            behaviour.clone(),
                        );
                        async move {
                            let response =
                                forward(&client, &upstream, &behaviour, &record, request).await;
                            Ok::<_, Infallible>(response)
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { url, seen }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn forward(
    client: &Client<HttpConnector, Full<Bytes>>,
    upstream: &str,
    behaviour: &Behaviour,
    record: &Mutex<Vec<Seen>>,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body_json: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let is_initialize = body_json["method"] == "initialize";
    let has_session = parts.headers.contains_key("mcp-session-id");
    let call_error = behaviour
        .call_error
        .as_ref()
        .filter(|_| body_json["method"] == "tools/call");
    let response = if behaviour.legacy_only && !is_initialize && !has_session {
        let error = json!({"jsonrpc": "2.0", "id": "server-error",
                           "error": {"code": -32600, "message": "Bad Request: Missing session ID"}});
        json_response(StatusCode::BAD_REQUEST, &error)
    } else if let Some(error) = call_error {
        let answer = json!({"jsonrpc": "2.0", "id": body_json["id"], "error": error});
        json_response(StatusCode::OK, &answer)
    } else {
        let mut outbound = Request::post(upstream)
            .body(Full::new(bytes.clone()))
            .unwrap();
        for (name, value) in &parts.headers {
            if name != "host" {
                outbound.headers_mut().insert(name.clone(), value.clone());
            }
        }
        let answer = client.request(outbound).await.unwrap();
        let (answer_parts, answer_body) = answer.into_parts();
        let answer_bytes = answer_body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let mut response = Response::new(Full::new(answer_bytes));
        *response.status_mut() = answer_parts.status;
        for name in ["content-type", "mcp-session-id"] {
            if let Some(value) = answer_parts.headers.get(name) {
                response.headers_mut().insert(name, value.clone());
            }
        }
        response
    };
    record.lock().unwrap().push(Seen {
        headers: parts.headers,
        body: body_json,
        status: response.status().as_u16(),
    });
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}
