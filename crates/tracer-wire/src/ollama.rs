//! Ollama's native `POST /api/chat`: request, reply and NDJSON stream chunks, with tool calls.
//!
//! Tool-call `arguments` are a JSON object here (OpenAI sends a string). Fields Ollama may omit
//! default, so replies from real servers, stand-ins and older versions all read. Streamed chunks
//! fold into one message with [`ChatStreamAssembler`]. Pure: no I/O.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The chat endpoint, relative to the server's base URL.
pub const CHAT_PATH: &str = "/api/chat";
/// The NDJSON content type of a streamed reply.
pub const NDJSON_CONTENT_TYPE: &str = "application/x-ndjson";

/// `POST /api/chat` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// Ollama streams unless this is present and false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<Value>,
}

/// One chat message; `role` is `system`, `user`, `assistant` or `tool`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// On a `tool` message: the tool that produced this result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn text(role: &str, content: impl Into<String>) -> Self {
        Self {
            role: role.to_string(),
            content: content.into(),
            ..Self::default()
        }
    }

    /// The tool calls of an assistant message (none when absent).
    pub fn calls(&self) -> &[ToolCall] {
        self.tool_calls.as_deref().unwrap_or(&[])
    }
}

/// A tool the model may call: the same `{"type":"function","function":{name, description,
/// parameters}}` as OpenAI's (Ollama took the format over), so one type serves both.
pub use super::openai::Tool;

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    pub name: String,
    /// A JSON object, key order kept.
    #[serde(default)]
    pub arguments: Value,
}

/// A whole reply (`stream: false`) or one NDJSON line of a stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    #[serde(default)]
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    #[serde(default)]
    pub done: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_reason: Option<String>,
    /// Durations are nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_duration: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_duration: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_duration: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_duration: Option<u64>,
    /// An error reported in place of a reply (also mid-stream, with HTTP status 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Folds streamed chunks into the message they spell: content and thinking are concatenated,
/// tool calls (which Ollama sends whole) are collected in order.
#[derive(Debug, Default)]
pub struct ChatStreamAssembler {
    message: Message,
    last: ChatResponse,
    chunks: usize,
}

impl ChatStreamAssembler {
    pub fn new() -> Self {
        Self {
            message: Message::text("assistant", ""),
            ..Self::default()
        }
    }

    /// Adds one chunk; returns the text it added to `content` (what a live view would show).
    pub fn push(&mut self, chunk: ChatResponse) -> &str {
        self.chunks += 1;
        let mut added = 0..0;
        if let Some(part) = &chunk.message {
            if !part.role.is_empty() {
                self.message.role.clone_from(&part.role);
            }
            let start = self.message.content.len();
            self.message.content.push_str(&part.content);
            added = start..self.message.content.len();
            if let Some(thinking) = &part.thinking {
                self.message
                    .thinking
                    .get_or_insert_with(String::new)
                    .push_str(thinking);
            }
            if let Some(calls) = &part.tool_calls {
                self.message
                    .tool_calls
                    .get_or_insert_with(Vec::new)
                    .extend(calls.iter().cloned());
            }
        }
        self.last = ChatResponse {
            message: None,
            ..chunk
        };
        &self.message.content[added]
    }

    pub fn chunks(&self) -> usize {
        self.chunks
    }

    /// Whether the final (`done: true`) chunk has arrived.
    pub fn is_done(&self) -> bool {
        self.last.done
    }

    /// The reply as if it had been sent whole: the last chunk's metadata with the full message.
    pub fn finish(self) -> ChatResponse {
        ChatResponse {
            message: Some(self.message),
            ..self.last
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_articles_tool_call_reply() {
        let reply: ChatResponse = serde_json::from_value(json!({
            "message": {"role": "assistant", "content": "",
              "tool_calls": [{"function": {"name": "append", "arguments": {"content": "buy milk"}}}]},
            "done": true
        }))
        .unwrap();
        let message = reply.message.unwrap();
        assert_eq!(message.calls()[0].function.name, "append");
        assert_eq!(
            message.calls()[0].function.arguments,
            json!({"content": "buy milk"})
        );
    }

    #[test]
    fn tool_result_message_serializes_like_the_article() {
        let mut message = Message::text("tool", "Success");
        message.tool_name = Some("append".into());
        assert_eq!(
            serde_json::to_string(&message).unwrap(),
            r#"{"role":"tool","content":"Success","tool_name":"append"}"#
        );
    }

    #[test]
    fn assembles_a_stream_with_thinking_and_a_whole_tool_call() {
        let lines = [
            json!({"model":"m","message":{"role":"assistant","content":"","thinking":"Let me "},"done":false}),
            json!({"model":"m","message":{"role":"assistant","content":"","thinking":"see."},"done":false}),
            json!({"model":"m","message":{"role":"assistant","content":"Adding","tool_calls":[
                {"id":"call_ab12cd34","function":{"index":0,"name":"append","arguments":{"content":"x"}}}]},"done":false}),
            json!({"model":"m","message":{"role":"assistant","content":" it."},"done":true,"done_reason":"stop","eval_count":7}),
        ];
        let mut assembler = ChatStreamAssembler::new();
        let mut shown = String::new();
        for line in lines {
            shown.push_str(assembler.push(serde_json::from_value(line).unwrap()));
        }
        assert!(assembler.is_done());
        assert_eq!(shown, "Adding it.");
        let whole = assembler.finish();
        assert_eq!(whole.eval_count, Some(7));
        let message = whole.message.unwrap();
        assert_eq!(message.content, "Adding it.");
        assert_eq!(message.thinking.as_deref(), Some("Let me see."));
        assert_eq!(message.calls()[0].id.as_deref(), Some("call_ab12cd34"));
    }

    #[test]
    fn request_omits_unset_fields() {
        let request = ChatRequest {
            model: "qwen2.5:7b".into(),
            messages: vec![Message::text("user", "hi")],
            tools: None,
            stream: Some(false),
            format: None,
            options: None,
            think: None,
            keep_alive: None,
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"model":"qwen2.5:7b","messages":[{"role":"user","content":"hi"}],"stream":false}"#
        );
    }
}
