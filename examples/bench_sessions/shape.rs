//! Which agent the session imitates: Claude Code (Anthropic Messages, the default) or Qwen Code
//! (OpenAI chat completions, the 604-turn session of issue 28); each step in its dialect.

use serde_json::Value;

use super::chat;
use super::session::{self, Answer, Rng};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Anthropic Messages on `/v1/messages`, ~80 KB system prompt and 40 tools.
    Claude,
    /// OpenAI chat completions on `/v1/chat/completions`, ~78 KB system message and 16 tools.
    Qwen,
}

impl Shape {
    pub fn parse(name: &str) -> Option<Shape> {
        match name {
            "claude" | "anthropic" => Some(Shape::Claude),
            "qwen604" | "qwen" | "openai" => Some(Shape::Qwen),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shape::Claude => "claude (Anthropic Messages)",
            Shape::Qwen => "qwen604 (OpenAI chat completions)",
        }
    }

    /// The turns when `--turns` is not given: the sessions.
    pub fn default_turns(self) -> usize {
        match self {
            Shape::Claude => 600,
            Shape::Qwen => 604,
        }
    }

    pub fn preamble(self, rng: &mut Rng) -> (Value, Value) {
        match self {
            Shape::Claude => session::preamble(rng),
            Shape::Qwen => chat::preamble(rng),
        }
    }

    pub fn request_body(self, system: &Value, tools: &Value, history: &[Value]) -> Vec<u8> {
        match self {
            Shape::Claude => session::request_body(system, tools, history),
            Shape::Qwen => chat::request_body(system, tools, history),
        }
    }

    /// The request's path and its extra header lines.
    pub fn endpoint(self) -> (&'static str, &'static str) {
        match self {
            Shape::Claude => (
                "/v1/messages",
                "anthropic-version: 2023-06-01\r\nx-api-key: sk-ant-bench\r\n",
            ),
            Shape::Qwen => (
                "/v1/chat/completions",
                "authorization: Bearer sk-bench\r\nuser-agent: QwenCode/0.0.14 (linux; x64)\r\n",
            ),
        }
    }

    /// The scripted answer, its tool call named as the dialect names them (`toolu_…`, `call_…`).
    pub fn answer_for(self, rng: &mut Rng, turn: usize, turns: usize, every: usize) -> Answer {
        match (self, session::answer_for(rng, turn, turns, every)) {
            (Shape::Qwen, Answer::ToolUse { name, query, .. }) => Answer::ToolUse {
                id: format!("call_{turn:05}"),
                name,
                query,
            },
            (_, answer) => answer,
        }
    }

    pub fn sse_events(self, answer: &Answer, turn: usize) -> Vec<String> {
        match self {
            Shape::Claude => session::sse_events(answer, turn),
            Shape::Qwen => chat::sse_events(answer, turn),
        }
    }

    pub fn assistant_message(self, answer: &Answer) -> Value {
        match self {
            Shape::Claude => session::assistant_message(answer),
            Shape::Qwen => chat::assistant_message(answer),
        }
    }

    pub fn tool_result(self, id: &str, text: &str) -> Value {
        match self {
            Shape::Claude => session::tool_result(id, text),
            Shape::Qwen => chat::tool_result(id, text),
        }
    }
}
