//! The generated session: an ~80 KB system prompt and tool list, a history that grows by a
//! user message, a streamed answer and now and then a tool call and its result, turn by turn.

use serde_json::{Value, json};

/// A small deterministic generator (xorshift64*), so every run sends the same session.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const WORDS: &[&str] = &[
    "the", "file", "function", "returns", "error", "test", "module", "value", "config", "path",
    "read", "write", "struct", "field", "async", "await", "result", "option", "string", "bytes",
    "parse", "token", "request", "response", "header", "body", "stream", "trace", "hop", "store",
    "query", "index", "cache", "line", "column", "build", "cargo", "crate", "compile", "warning",
    "because", "should", "instead", "before", "after", "every", "which", "where", "when", "then",
];

/// `len` bytes or so of English-like text.
pub fn prose(rng: &mut Rng, len: usize) -> String {
    let mut text = String::with_capacity(len + 16);
    while text.len() < len {
        let word = WORDS[rng.below(WORDS.len() as u64) as usize];
        text.push_str(word);
        text.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    text
}

/// The part every request repeats: the system prompt and the tools (about 80 KB together).
pub fn preamble(rng: &mut Rng) -> (Value, Value) {
    let system = json!([{"type": "text", "text": prose(rng, 50_000)}]);
    let tools: Vec<Value> = (0..40)
        .map(|i| {
            json!({
                "name": format!("tool_{i}"),
                "description": prose(rng, 650),
                "input_schema": {"type": "object", "properties": {
                    "path": {"type": "string", "description": prose(rng, 60)},
                    "query": {"type": "string", "description": prose(rng, 60)}
                }}
            })
        })
        .collect();
    (system, Value::Array(tools))
}

/// One model request's body, the history as it is now.
pub fn request_body(system: &Value, tools: &Value, history: &[Value]) -> Vec<u8> {
    let body = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 8192,
        "stream": true,
        "system": system,
        "tools": tools,
        "messages": history,
    });
    body.to_string().into_bytes()
}

/// What the scripted model answers on a turn: text, or a call of the MCP tool.
pub enum Answer {
    Text(String),
    ToolUse {
        id: String,
        name: &'static str,
        query: String,
    },
}

impl Answer {
    /// A call of the MCP server's tool (the others the agent runs itself).
    pub fn calls_mcp(&self) -> bool {
        matches!(
            self,
            Answer::ToolUse {
                name: "search_docs",
                ..
            }
        )
    }
}

/// The SSE events of a streamed Messages answer, one event per write.
pub fn sse_events(answer: &Answer, turn: usize) -> Vec<String> {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{turn:05}"),
            "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
            "stop_reason": null, "usage": {"input_tokens": 20_000 + turn * 300, "output_tokens": 1}}}),
    )];
    let stop = match answer {
        Answer::Text(text) => {
            events.push(event(
                "content_block_start",
                json!({"type": "content_block_start",
                "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            for piece in text.as_bytes().chunks(40) {
                let piece = String::from_utf8_lossy(piece);
                events.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta",
                    "index": 0, "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
            "end_turn"
        }
        Answer::ToolUse { id, name, query } => {
            events.push(event(
                "content_block_start",
                json!({"type": "content_block_start",
                "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name,
                "input": {}}}),
            ));
            let input = json!({"query": query}).to_string();
            for piece in input.as_bytes().chunks(16) {
                let piece = String::from_utf8_lossy(piece);
                events.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta",
                    "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                ));
            }
            "tool_use"
        }
    };
    events.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push(event(
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop}, "usage": {"output_tokens": 120}}),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    events
}

/// The answer the script gives on `turn`: the agent works alone, a tool call on every turn
/// (the MCP server's every `tool_every` turns, the agent's own `read_file` otherwise), and
/// answers in text on the last one.
pub fn answer_for(rng: &mut Rng, turn: usize, turns: usize, tool_every: usize) -> Answer {
    if turn + 1 < turns {
        Answer::ToolUse {
            id: format!("toolu_{turn:05}"),
            name: if turn % tool_every == tool_every - 1 {
                "search_docs"
            } else {
                "read_file"
            },
            query: prose(rng, 40).trim().to_string(),
        }
    } else {
        let len = 150 + rng.below(700) as usize;
        Answer::Text(prose(rng, len))
    }
}

/// The message carrying a tool's result back (a user message of `tool_result` blocks).
pub fn tool_result(id: &str, text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
        "content": [{"type": "text", "text": text}]}]})
}

/// The assistant message the client keeps in its history for an answer.
pub fn assistant_message(answer: &Answer) -> Value {
    match answer {
        Answer::Text(text) => {
            json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
        }
        Answer::ToolUse { id, name, query } => json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": name, "input": {"query": query}}]}),
    }
}

/// The MCP `tools/call` request for a tool call, and the result the MCP server answers.
pub fn mcp_call(id: usize, query: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "search_docs", "arguments": {"query": query}}})
    .to_string()
    .into_bytes()
}

pub fn mcp_result(rng: &mut Rng, id: u64) -> Vec<u8> {
    let len = 800 + rng.below(2000) as usize;
    let text = prose(rng, len);
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}],
        "isError": false}})
    .to_string()
    .into_bytes()
}
