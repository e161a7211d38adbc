//! In-process parts of an agent system for grouping tests over the real proxy: a model double
//! (Ollama `/api/chat`), an MCP double (JSON-RPC over HTTP) and a test host that, per user
//! request, lists the tools, asks the model, calls the tool it asked for and asks again.
//!
//! Every request the host makes carries `x-test-request` naming the user request that caused it:
//! the tests score grouping against it (grouping never reads it).
#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rand::Rng;
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub const TAG: &str = "x-test-request";

pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

pub fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build(HttpConnector::new())
}

fn json_response(status: StatusCode, value: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Serves `handler` on 127.0.0.1:0 until the test ends.
pub async fn serve<F, Fut>(handler: F) -> SocketAddr
where
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let handler = handler.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let handler = handler.clone();
                    async move { Ok::<_, Infallible>(handler(req).await) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

async fn body_json(req: Request<Incoming>) -> Value {
    let bytes = req.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

async fn jitter(max_ms: u64) {
    let ms = rand::rng().random_range(0..=max_ms);
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// The item in "Add ITEM to my notes".
fn item_of(text: &str) -> String {
    text.trim_start_matches("Add ")
        .trim_end_matches(" to my notes")
        .to_string()
}

/// A model that asks for `append` with the user's item, then answers once the tool has run.
pub async fn model_double() -> SocketAddr {
    serve(|req| async move {
        let body = body_json(req).await;
        jitter(40).await;
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let user = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let item = item_of(user);
        let last_role = messages.last().map(|m| m["role"].clone()).unwrap_or(Value::Null);
        let message = if last_role == "tool" {
            json!({"role": "assistant", "content": format!("I've added \"{item}\".")})
        } else {
            json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "append", "arguments": {"content": item}}}]})
        };
        json_response(
            StatusCode::OK,
            &json!({"model": "double", "created_at": "2026-11-29T12:00:00Z", "message": message, "done": true, "done_reason": "stop"}),
        )
    })
    .await
}

/// An MCP server with the notes tools; `tools/call` answers "Success" as the article's does.
pub async fn mcp_double() -> SocketAddr {
    serve(|req| async move {
        let body = body_json(req).await;
        jitter(10).await;
        let id = body["id"].clone();
        let result = match body["method"].as_str() {
            Some("initialize") => json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "notes-double", "version": "1"}}),
            Some("notifications/initialized") => {
                return Response::builder()
                    .status(StatusCode::ACCEPTED)
                    .body(Full::new(Bytes::new()))
                    .unwrap();
            }
            Some("tools/list") => {
                let tools = ["append", "read", "write", "update", "clear"]
                    .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}));
                json!({ "tools": tools })
            }
            Some("tools/call") => json!({"content": [{"type": "text", "text": "Success"}], "isError": false}),
            _ => {
                return json_response(
                    StatusCode::OK,
                    &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}}),
                );
            }
        };
        json_response(StatusCode::OK, &json!({"jsonrpc": "2.0", "id": id, "result": result}))
    })
    .await
}

/// The host: talks to the model and MCP server through the proxy's routes.
pub struct TestHost {
    pub model_url: String,
    pub mcp_url: String,
    /// Copy the incoming `traceparent` onto every request made for it.
    pub propagate: bool,
    /// List the MCP tools at the start of every request (the article's host does; open-webui
    /// and mcpo list them once, at start-up).
    pub list_tools_per_request: bool,
    client: HttpClient,
}

impl TestHost {
    pub fn new(
        model_url: String,
        mcp_url: String,
        propagate: bool,
        list_tools_per_request: bool,
    ) -> Arc<TestHost> {
        Arc::new(TestHost {
            model_url,
            mcp_url,
            propagate,
            list_tools_per_request,
            client: client(),
        })
    }

    /// The tools as the model is told them.
    async fn tools(&self, headers: &[(String, String)]) -> Vec<Value> {
        let listed = if self.list_tools_per_request {
            self.post(
                &self.mcp_url,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
                headers,
            )
            .await
        } else {
            json!({"result": {"tools": [{"name": "append", "inputSchema": {"type": "object"}}]}})
        };
        listed["result"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| json!({"type": "function", "function": {"name": t["name"], "parameters": t["inputSchema"]}}))
            .collect()
    }

    async fn post(&self, url: &str, body: &Value, headers: &[(String, String)]) -> Value {
        let mut request = Request::post(url).header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = self
            .client
            .request(
                request
                    .body(Full::new(Bytes::from(body.to_string())))
                    .unwrap(),
            )
            .await
            .unwrap();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    }

    /// What a host does when it starts, before any user request: MCP discovery.
    pub async fn start_up(&self) {
        let tag = [(TAG.to_string(), "setup".to_string())];
        self.post(&self.mcp_url, &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test-host", "version": "1"}}}), &tag).await;
        self.post(
            &self.mcp_url,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &tag,
        )
        .await;
        self.post(
            &self.mcp_url,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            &tag,
        )
        .await;
    }

    /// One user request: the buy-milk walk.
    async fn handle(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let mut headers = Vec::new();
        if let Some(tag) = req.headers().get(TAG).and_then(|v| v.to_str().ok()) {
            headers.push((TAG.to_string(), tag.to_string()));
        }
        if self.propagate
            && let Some(parent) = req
                .headers()
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
        {
            headers.push(("traceparent".to_string(), parent.to_string()));
        }
        let text = body_json(req).await["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let tools = self.tools(&headers).await;
        let system = json!({"role": "system", "content": "You manage the user's notes."});
        let user = json!({"role": "user", "content": text});
        let first = self
            .post(&self.model_url, &json!({"model": "double", "messages": [system, user], "tools": tools, "stream": false}), &headers)
            .await;
        let asked = first["message"].clone();
        let call = asked["tool_calls"][0]["function"].clone();
        let result = self
            .post(&self.mcp_url, &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": call["name"], "arguments": call["arguments"]}}), &headers)
            .await;
        let result_text = result["result"]["content"][0]["text"].clone();
        let second = self
            .post(&self.model_url, &json!({"model": "double", "messages": [system, user, asked, {"role": "tool", "content": result_text, "tool_name": call["name"]}], "tools": tools, "stream": false}), &headers)
            .await;
        json_response(
            StatusCode::OK,
            &json!({"reply": second["message"]["content"], "tool_calls": [{"name": call["name"], "arguments": call["arguments"]}]}),
        )
    }

    pub async fn serve(self: &Arc<TestHost>) -> SocketAddr {
        let host = self.clone();
        serve(move |req| {
            let host = host.clone();
            async move { host.handle(req).await }
        })
        .await
    }
}
