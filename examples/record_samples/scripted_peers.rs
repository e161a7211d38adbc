//! The scripted peers of the recordings: a model server that answers set bodies in order
//! (whole, or NDJSON lines with pauses), and seed 002's phonebook MCP server.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub type Body = BoxBody<Bytes, Infallible>;

/// One scripted model answer: a whole body, or NDJSON lines each sent after a pause.
#[derive(Debug, Clone)]
pub enum Answer {
    Whole(String),
    Stream(Vec<(u64, String)>),
}

/// An Ollama `/api/chat` answer with the fields a real server adds.
pub fn ollama(content: &str, calls: Value, prompt_tokens: u64, output_tokens: u64) -> Answer {
    let mut message = json!({ "role": "assistant", "content": content });
    if calls.as_array().is_some_and(|c| !c.is_empty()) {
        message["tool_calls"] = calls;
    }
    Answer::Whole(
        json!({
            "model": "qwen2.5:7b",
            "created_at": "2026-11-29T10:00:00.000000000Z",
            "message": message,
            "done_reason": "stop",
            "done": true,
            "total_duration": 1_200_000_000u64 + output_tokens * 30_000_000,
            "load_duration": 40_000_000u64,
            "prompt_eval_count": prompt_tokens,
            "prompt_eval_duration": prompt_tokens * 1_000_000,
            "eval_count": output_tokens,
            "eval_duration": output_tokens * 30_000_000,
        })
        .to_string(),
    )
}

pub fn call(name: &str, arguments: Value) -> Value {
    json!([{ "function": { "name": name, "arguments": arguments } }])
}

pub fn body(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// Serves the answers in order, one per request; a request past the script gets a 500.
pub async fn scripted_model(answers: Vec<Answer>) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let answers = Arc::new(answers);
    let next = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (answers, next) = (answers.clone(), next.clone());
            let service = service_fn(move |request: http::Request<Incoming>| {
                let (answers, next) = (answers.clone(), next.clone());
                async move {
                    let _ = request.into_body().collect().await;
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, Infallible>(model_reply(answers.get(index).cloned()))
                }
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    Ok(addr)
}

fn model_reply(answer: Option<Answer>) -> http::Response<Body> {
    let builder = http::Response::builder();
    let reply = match answer {
        None => builder
            .status(500)
            .header("content-type", "application/json; charset=utf-8")
            .body(body(r#"{"error":"the script has no more answers"}"#)),
        Some(Answer::Whole(text)) => builder
            .header("content-type", "application/json; charset=utf-8")
            .body(body(text)),
        Some(Answer::Stream(lines)) => {
            let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(8);
            tokio::spawn(async move {
                for (pause_ms, line) in lines {
                    tokio::time::sleep(Duration::from_millis(pause_ms)).await;
                    if tx.send(Bytes::from(format!("{line}\n"))).await.is_err() {
                        return;
                    }
                }
            });
            let frames = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv()
                    .await
                    .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
            });
            builder
                .header("content-type", "application/x-ndjson")
                .body(StreamBody::new(frames).boxed())
        }
    };
    reply.unwrap_or_else(|_| http::Response::new(body("")))
}

/// Seed 002's phonebook MCP server (FastMCP over Streamable HTTP), answering its two bodies.
pub async fn phonebook_server() -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service_fn(|request: http::Request<Incoming>| async move {
                let bytes = request
                    .into_body()
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let asked: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let id = asked.get("id").cloned().unwrap_or(Value::Null);
                let result = match asked.get("method").and_then(Value::as_str) {
                    Some("tools/list") => json!({ "tools": [phonebook_tool()] }),
                    _ => json!({
                        "content": [{ "type": "text", "text": "555-66666666" }],
                        "structuredContent": { "result": "555-66666666" },
                        "isError": false
                    }),
                };
                let reply = json!({ "jsonrpc": "2.0", "id": id, "result": result });
                Ok::<_, Infallible>(
                    http::Response::builder()
                        .header("content-type", "application/json")
                        .body(body(reply.to_string()))
                        .unwrap_or_else(|_| http::Response::new(body(""))),
                )
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    Ok(addr)
}

fn phonebook_tool() -> Value {
    json!({
        "name": "get_phonenumber",
        "description": "\n Deliver the phone number for a certain person.\n Args:\n name: Name of the person (e.g., 'Axel Foley')\n Returns:\n A string with the person's phone number\n ",
        "inputSchema": {
            "properties": { "name": { "title": "Name", "type": "string" } },
            "required": ["name"], "title": "get_phonenumberArguments", "type": "object"
        },
        "outputSchema": {
            "properties": { "result": { "title": "Result", "type": "string" } },
            "required": ["result"], "title": "get_phonenumberOutput", "type": "object"
        }
    })
}
