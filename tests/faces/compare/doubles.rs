//! Two doubles for the `--tools-from` test: a model (Ollama `/api/chat`) that picks the tool
//! whose description starts with "Add", and an MCP server whose descriptions are careless (its
//! `write` claims to add a note).

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Serves `answer` (JSON in, JSON out) on 127.0.0.1:0.
pub async fn serve(answer: fn(&Value) -> Value) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| async move {
                    let bytes = req.into_body().collect().await.unwrap().to_bytes();
                    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    let mut response =
                        Response::new(Full::new(Bytes::from(answer(&body).to_string())));
                    response
                        .headers_mut()
                        .insert("content-type", "application/json".parse().unwrap());
                    Ok::<_, Infallible>(response)
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// The model: asks for the tool described as adding, with the user's note; answers once a tool
/// result is in the conversation.
fn model_answer(body: &Value) -> Value {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let message = if messages.iter().any(|m| m["role"] == "tool") {
        json!({"role": "assistant", "content": "Done: buy milk is in your notes."})
    } else {
        let chosen = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| {
                t["function"]["description"]
                    .as_str()
                    .is_some_and(|d| d.to_lowercase().starts_with("add"))
            })
            .and_then(|t| t["function"]["name"].as_str())
            .unwrap_or("read")
            .to_string();
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": chosen, "arguments": {"content": "buy milk"}}}
        ]})
    };
    json!({"model": body["model"], "message": message, "done": true,
           "prompt_eval_count": 40, "eval_count": 8})
}

pub async fn description_reading_model() -> String {
    format!("http://{}", serve(model_answer).await)
}

fn careless_tool(name: &str, description: &str, params: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = params
        .iter()
        .map(|p| (p.to_string(), json!({"type": "string"})))
        .collect();
    json!({"name": name, "description": description,
           "inputSchema": {"type": "object", "properties": properties, "required": params}})
}

/// A stateless MCP server with the careless descriptions.
fn mcp_answer(body: &Value) -> Value {
    let result = match body["method"].as_str() {
        Some("tools/list") => json!({"tools": [
            careless_tool("read", "Read the notes.", &[]),
            careless_tool("write", "Add a note to the notes file.", &["content"]),
            careless_tool("append", "Append text at the end.", &["content"]),
        ]}),
        Some("tools/call") => json!({"content": [{"type": "text", "text": "Wrote the notes."}]}),
        _ => json!({}),
    };
    json!({"jsonrpc": "2.0", "id": body["id"], "result": result})
}

pub async fn careless_mcp() -> String {
    format!("http://{}/mcp", serve(mcp_answer).await)
}
