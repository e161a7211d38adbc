//! A scripted OpenAI-compatible model for the HTTPS tests: Chat Completions and the Responses
//! API, whole and streamed (SSE), asking for a tool when tools are offered and no result has
//! come back yet, answering in words once one has.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::{Value, json};

use super::https_support::{TestBody, full};

pub async fn answer(request: Request<Incoming>) -> Response<TestBody> {
    let path = request.uri().path().to_string();
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let stream = body["stream"].as_bool() == Some(true);
    match (path.as_str(), stream) {
        ("/v1/chat/completions", false) => json_response(&chat(&body)),
        ("/v1/chat/completions", true) => sse(chat_events()),
        ("/v1/responses", false) => json_response(&responses(&body)),
        ("/v1/responses", true) => sse(responses_events()),
        _ => {
            let mut response = Response::new(full("not found"));
            *response.status_mut() = http::StatusCode::NOT_FOUND;
            response
        }
    }
}

fn chat(body: &Value) -> Value {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last_role = messages
        .last()
        .map(|m| m["role"].clone())
        .unwrap_or_default();
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let message = if last_role == "tool" {
        json!({"role": "assistant", "content": "I added \"buy milk\" to your notes."})
    } else if has_tools {
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "append", "arguments": "{\"content\":\"buy milk\"}"}}]})
    } else {
        json!({"role": "assistant", "content": "hi"})
    };
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1_795_996_800,
           "model": "gpt-test",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}})
}

fn chat_events() -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        let value = json!({"id": "chatcmpl-2", "object": "chat.completion.chunk",
                           "created": 1_795_996_800, "model": "gpt-test",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {value}\n\n")
    };
    vec![
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "hel"}), Value::Null),
        chunk(json!({"content": "lo!"}), Value::Null),
        chunk(json!({}), json!("stop")),
        "data: [DONE]\n\n".to_string(),
    ]
}

fn response_object(output: Vec<Value>, status: &str) -> Value {
    json!({"id": "resp_1", "object": "response", "created_at": 1_795_996_800,
           "status": status, "model": "gpt-test", "output": output,
           "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
           "usage": {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 0},
                     "output_tokens": 6, "output_tokens_details": {"reasoning_tokens": 0},
                     "total_tokens": 36}})
}

fn message_item(text: &str) -> Value {
    json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn responses(body: &Value) -> Value {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let output = input
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .map(|item| {
            let notes = item["output"].as_str().unwrap_or_default();
            message_item(&format!("Your notes say: {notes}"))
        });
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let output = match output {
        Some(message) => message,
        None if has_tools => json!({"type": "function_call", "id": "fc_1", "call_id": "call_r1",
                                    "name": "read", "arguments": "{}", "status": "completed"}),
        None => message_item("hello"),
    };
    response_object(vec![output], "completed")
}

fn responses_events() -> Vec<String> {
    let mut sequence = 0;
    let mut event = |kind: &str, mut data: Value| {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(sequence);
        sequence += 1;
        format!("event: {kind}\ndata: {data}\n\n")
    };
    let empty = json!({"type": "message", "id": "msg_2", "role": "assistant",
                       "status": "in_progress", "content": []});
    let part = json!({"type": "output_text", "text": "", "annotations": []});
    let ids = json!({"item_id": "msg_2", "output_index": 0, "content_index": 0});
    let with = |extra: Value| {
        let mut value = ids.clone();
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            value[k] = v;
        }
        value
    };
    vec![
        event(
            "response.created",
            json!({"response": response_object(vec![], "in_progress")}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": empty}),
        ),
        event("response.content_part.added", with(json!({"part": part}))),
        event(
            "response.output_text.delta",
            with(json!({"delta": "Hel", "logprobs": []})),
        ),
        event(
            "response.output_text.delta",
            with(json!({"delta": "lo there", "logprobs": []})),
        ),
        event(
            "response.output_text.done",
            with(json!({"text": "Hello there", "logprobs": []})),
        ),
        event(
            "response.output_item.done",
            json!({"output_index": 0, "item": message_item("Hello there")}),
        ),
        event(
            "response.completed",
            json!({"response": response_object(vec![message_item("Hello there")], "completed")}),
        ),
    ]
}

fn json_response(value: &Value) -> Response<TestBody> {
    let mut response = Response::new(full(value.to_string()));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    response
}

fn sse(events: Vec<String>) -> Response<TestBody> {
    let frames = futures_util::stream::iter(
        events
            .into_iter()
            .map(|e| Ok::<_, Infallible>(Frame::data(Bytes::from(e)))),
    );
    let mut response = Response::new(StreamBody::new(frames).boxed());
    response
        .headers_mut()
        .insert("content-type", "text/event-stream".parse().unwrap());
    response
}
