//! How the scripted model encodes its replies: Ollama `/api/chat` (whole, or NDJSON lines) and
//! OpenAI chat completions (whole, or SSE events with tool-call arguments in fragments). Each
//! streamed piece says whether it carries answer text (where a reply's gate may hold the stream).

use serde_json::{Value, json};

use super::scripted_model::{Call, Reply};

/// Splits text into pieces of a few characters, as a model's tokens would arrive.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

fn ollama_calls(reply: &Reply) -> Value {
    Value::Array(
        reply
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut call =
                    json!({"function": {"index": i, "name": c.name, "arguments": c.arguments}});
                if !c.id.is_empty() {
                    call["id"] = json!(c.id);
                }
                call
            })
            .collect(),
    )
}

pub fn ollama_whole(model: &str, reply: &Reply) -> Value {
    let mut message = json!({"role": "assistant", "content": reply.content});
    if let Some(thinking) = &reply.thinking {
        message["thinking"] = json!(thinking);
    }
    if !reply.calls.is_empty() {
        message["tool_calls"] = ollama_calls(reply);
    }
    json!({"model": model, "created_at": "2026-11-29T12:00:00Z", "message": message, "done": true,
           "done_reason": "stop", "prompt_eval_count": 11, "eval_count": 7})
}

pub fn ollama_lines(model: &str, reply: &Reply) -> Vec<(String, bool)> {
    let line = |message: Value, done: bool| {
        let mut chunk = json!({"model": model, "created_at": "2026-11-29T12:00:00Z", "message": message, "done": done});
        if done {
            chunk["done_reason"] = json!("stop");
            chunk["prompt_eval_count"] = json!(11);
            chunk["eval_count"] = json!(7);
        }
        format!("{chunk}\n")
    };
    let mut out = Vec::new();
    for piece in reply.thinking.as_deref().map(pieces).unwrap_or_default() {
        out.push((
            line(
                json!({"role": "assistant", "content": "", "thinking": piece}),
                false,
            ),
            false,
        ));
    }
    for piece in pieces(&reply.content) {
        out.push((
            line(json!({"role": "assistant", "content": piece}), false),
            true,
        ));
    }
    if !reply.calls.is_empty() {
        let message =
            json!({"role": "assistant", "content": "", "tool_calls": ollama_calls(reply)});
        out.push((line(message, false), false));
    }
    out.push((
        line(json!({"role": "assistant", "content": ""}), true),
        false,
    ));
    out
}

fn openai_arguments(call: &Call) -> String {
    call.raw_arguments
        .clone()
        .unwrap_or_else(|| call.arguments.to_string())
}

pub fn openai_whole(model: &str, reply: &Reply) -> Value {
    let mut message = json!({"role": "assistant", "content": if reply.calls.is_empty() { json!(reply.content) } else { Value::Null }});
    if let Some(thinking) = &reply.thinking {
        message["reasoning"] = json!(thinking);
    }
    if !reply.calls.is_empty() {
        message["tool_calls"] = reply
            .calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": openai_arguments(c)}}))
            .collect();
    }
    let finish = if reply.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
           "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
           "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
}

pub fn openai_events(model: &str, reply: &Reply, include_usage: bool) -> Vec<(String, bool)> {
    let event = |delta: Value, finish: Value| {
        let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
                           "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
        format!("data: {chunk}\n\n")
    };
    let mut out = vec![(
        event(json!({"role": "assistant", "content": ""}), Value::Null),
        false,
    )];
    for piece in reply.thinking.as_deref().map(pieces).unwrap_or_default() {
        out.push((event(json!({"reasoning": piece}), Value::Null), false));
    }
    for piece in pieces(&reply.content) {
        out.push((event(json!({"content": piece}), Value::Null), true));
    }
    for (index, call) in reply.calls.iter().enumerate() {
        let first = json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                           "function": {"name": call.name, "arguments": ""}}]});
        out.push((event(first, Value::Null), false));
        for fragment in pieces(&openai_arguments(call)) {
            let more =
                json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]});
            out.push((event(more, Value::Null), false));
        }
    }
    let finish = if reply.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push((event(json!({}), json!(finish)), false));
    if include_usage {
        let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
                           "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}});
        out.push((format!("data: {usage}\n\n"), false));
    }
    out.push(("data: [DONE]\n\n".to_string(), false));
    out
}
