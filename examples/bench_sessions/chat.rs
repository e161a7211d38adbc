//! The Qwen Code-like shape: OpenAI chat completions (`/v1/chat/completions`, `stream: true`),
//! a system message and 16 function tools (about 78 KB together) at the head of every request,
//! tool calls answered by `tool` messages, answers streamed as `data:` chunks ending in `[DONE]`.

use serde_json::{Value, json};

use super::session::{Answer, Rng, prose};

const MODEL: &str = "qwen3-coder-plus";

/// Qwen Code's own tools, by name (their descriptions are generated).
const TOOLS: &[&str] = &[
    "list_directory",
    "read_file",
    "search_file_content",
    "glob",
    "replace",
    "write_file",
    "web_fetch",
    "read_many_files",
    "run_shell_command",
    "save_memory",
    "todo_write",
    "task",
    "web_search",
    "exit_plan_mode",
    "search_docs",
    "lint",
];

/// The system message's text and the tools (about 78 KB together as JSON).
pub fn preamble(rng: &mut Rng) -> (Value, Value) {
    let system = Value::String(prose(rng, 39_000));
    let tools: Vec<Value> = TOOLS
        .iter()
        .map(|name| {
            json!({"type": "function", "function": {
                "name": name,
                "description": prose(rng, 1_700),
                "parameters": {"type": "object", "properties": {
                    "absolute_path": {"type": "string", "description": prose(rng, 150)},
                    "query": {"type": "string", "description": prose(rng, 150)},
                    "limit": {"type": "number", "description": prose(rng, 60)}
                }, "required": ["query"]}
            }})
        })
        .collect();
    (system, Value::Array(tools))
}

/// One request's body: the system message, then the history as it is now.
pub fn request_body(system: &Value, tools: &Value, history: &[Value]) -> Vec<u8> {
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(json!({"role": "system", "content": system}));
    messages.extend(history.iter().cloned());
    json!({
        "model": MODEL,
        "messages": messages,
        "tools": tools,
        "stream": true,
        "stream_options": {"include_usage": true},
        "temperature": 0,
        "top_p": 1,
    })
    .to_string()
    .into_bytes()
}

/// The streamed answer: one `data:` chunk per write, then the usage chunk and `[DONE]`.
pub fn sse_events(answer: &Answer, turn: usize) -> Vec<String> {
    let id = format!("chatcmpl-{turn:05}");
    let chunk = |delta: Value, finish: Value| {
        let data = json!({"id": id, "object": "chat.completion.chunk", "created": 1_800_000_000 + turn,
            "model": MODEL, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {data}\n\n")
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let finish = match answer {
        Answer::Text(text) => {
            for piece in text.as_bytes().chunks(40) {
                let piece = String::from_utf8_lossy(piece);
                events.push(chunk(json!({"content": piece}), Value::Null));
            }
            "stop"
        }
        Answer::ToolUse { id, name, query } => {
            events.push(chunk(
                json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}}]}),
                Value::Null,
            ));
            let arguments = json!({"query": query}).to_string();
            for piece in arguments.as_bytes().chunks(16) {
                let piece = String::from_utf8_lossy(piece);
                events.push(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                    Value::Null,
                ));
            }
            "tool_calls"
        }
    };
    events.push(chunk(json!({}), json!(finish)));
    let prompt = 20_000 + turn * 300;
    let usage = json!({"id": id, "object": "chat.completion.chunk", "created": 1_800_000_000 + turn,
        "model": MODEL, "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 120, "total_tokens": prompt + 120}});
    events.push(format!("data: {usage}\n\n"));
    events.push("data: [DONE]\n\n".to_string());
    events
}

/// The assistant message the client keeps in its history for an answer.
pub fn assistant_message(answer: &Answer) -> Value {
    match answer {
        Answer::Text(text) => json!({"role": "assistant", "content": text}),
        Answer::ToolUse { id, name, query } => json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": id, "type": "function", "function": {"name": name,
            "arguments": json!({"query": query}).to_string()}}]}),
    }
}

/// The message carrying a tool's result back.
pub fn tool_result(id: &str, text: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": text})
}
