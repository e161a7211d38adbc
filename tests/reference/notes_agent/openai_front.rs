//! The OpenAI-compatible front: `GET /v1/models`, `POST /v1/chat/completions` whole and streamed
//! (tokens forwarded while the model is still producing them), the `Tools used` footer, and errors.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tracer_reference::agent::ModelApi;
use tracer_reference::agent::config::DEFAULT_SYSTEM_PROMPT;
use tracer_wire::stream::SseDecoder;

use super::harness::{LIMIT, NotesServerHandle, closed_port_url, config, send, start_agent};
use super::scripted_model::{Dialect, Reply, ScriptedModel};

fn chat_body(stream: bool) -> String {
    json!({"model": "whatever", "stream": stream, "stream_options": {"include_usage": true},
           "messages": [{"role": "system", "content": "You are a pirate. Say arr."},
                        {"role": "user", "content": "Add buy milk to my notes"}]})
    .to_string()
}

#[tokio::test]
async fn models_lists_the_model_behind_the_agent() {
    let notes = NotesServerHandle::start().await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        "http://127.0.0.1:9",
        vec![notes.spec()],
    ))
    .await;
    let reply = send(Method::GET, &format!("{agent}/v1/models"), "", &[])
        .await
        .json();
    assert_eq!(reply["object"], "list");
    assert_eq!(reply["data"][0]["id"], "qwen2.5:7b");
    assert_eq!(reply["data"][0]["object"], "model");
}

#[tokio::test]
async fn a_whole_completion_runs_the_loop_and_names_the_tools() {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("append", json!({"content": "buy milk"})),
            Reply::text("Added buy milk."),
        ],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    let reply = send(
        Method::POST,
        &format!("{agent}/v1/chat/completions"),
        &chat_body(false),
        &[],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let completion = reply.json();
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        completion["choices"][0]["message"]["content"],
        "Added buy milk.\n\n---\nTools used: append"
    );
    assert_eq!(completion["usage"]["total_tokens"], 36);
    assert!(notes.notes().contains("buy milk"));
    let first = &model.received()[0].body["messages"];
    assert_eq!(
        first[0],
        json!({"role": "system", "content": DEFAULT_SYSTEM_PROMPT}),
        "the client's system message is dropped"
    );
    assert_eq!(first.as_array().unwrap().len(), 2);
}

/// Reads an SSE response: releases `gate` once the first content arrives, returns every event.
async fn read_stream(url: &str, body: String, gate: &Notify) -> (u16, Vec<Value>) {
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let request = Request::post(url)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let response = tokio::time::timeout(LIMIT, client.request(request))
        .await
        .unwrap()
        .unwrap();
    let status = response.status().as_u16();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    let mut released = false;
    while let Some(frame) = tokio::time::timeout(LIMIT, body.frame())
        .await
        .expect("the stream stalled: was the answer buffered?")
    {
        let Ok(data) = frame.unwrap().into_data() else {
            continue;
        };
        for event in decoder.push(&data) {
            let value = if event.data == "[DONE]" {
                json!("[DONE]")
            } else {
                serde_json::from_str(&event.data).unwrap()
            };
            let has_text = value["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|t| !t.is_empty());
            if has_text && !released {
                gate.notify_one();
                released = true;
            }
            events.push(value);
        }
    }
    (status, events)
}

#[tokio::test]
async fn a_streamed_completion_forwards_tokens_as_the_model_makes_them() {
    let notes = NotesServerHandle::start().await;
    let gate = Arc::new(Notify::new());
    let mut answer = Reply::text("Added buy milk to your notes.");
    answer.gate = Some(gate.clone());
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("append", json!({"content": "buy milk"})),
            answer,
        ],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    // The model holds back the rest of its answer until the client has seen the first tokens.
    let (status, events) = read_stream(
        &format!("{agent}/v1/chat/completions"),
        chat_body(true),
        &gate,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(events.last().unwrap(), "[DONE]");
    assert_eq!(events[0]["choices"][0]["delta"]["role"], "assistant");
    let ids: std::collections::HashSet<&str> =
        events.iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(ids.len(), 1, "one id for the whole stream");
    let objects = events.iter().filter(|e| e.is_object());
    assert!(
        objects
            .clone()
            .all(|e| e["model"] == "qwen2.5:7b" && e["object"] == "chat.completion.chunk")
    );
    let text: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(
        text,
        "Added buy milk to your notes.\n\n---\nTools used: append"
    );
    let finish: Vec<&Value> = events
        .iter()
        .filter(|e| !e["choices"][0]["finish_reason"].is_null())
        .collect();
    assert_eq!(finish.len(), 1);
    assert_eq!(finish[0]["choices"][0]["finish_reason"], "stop");
    let usage = &events[events.len() - 2];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["total_tokens"], 36);
    assert!(model.received().iter().all(|r| r.body["stream"] == true));
    assert!(notes.notes().contains("buy milk"));
}

#[tokio::test]
async fn a_streamed_completion_with_the_model_down_is_a_502_before_any_event() {
    let notes = NotesServerHandle::start().await;
    let agent = start_agent(config(
        ModelApi::OpenAi,
        &closed_port_url("/v1").await,
        vec![notes.spec()],
    ))
    .await;
    let reply = send(
        Method::POST,
        &format!("{agent}/v1/chat/completions"),
        &chat_body(true),
        &[],
    )
    .await;
    assert_eq!(reply.status, 502);
    assert_eq!(reply.json()["error"]["upstream"]["role"], "model");
}

#[tokio::test]
async fn a_completion_without_a_user_message_is_refused() {
    let notes = NotesServerHandle::start().await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        "http://127.0.0.1:9",
        vec![notes.spec()],
    ))
    .await;
    let body = json!({"model": "m", "messages": [{"role": "system", "content": "hi"}]}).to_string();
    let reply = send(
        Method::POST,
        &format!("{agent}/v1/chat/completions"),
        &body,
        &[],
    )
    .await;
    assert_eq!(reply.status, 400);
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no user message")
    );
    let broken = send(
        Method::POST,
        &format!("{agent}/v1/chat/completions"),
        "{\"messages\": 3}",
        &[],
    )
    .await;
    assert_eq!(broken.status, 400);
}
