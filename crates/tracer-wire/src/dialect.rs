//! Dialect detection and the normalized reading of a hop's bodies (chat, MCP, agent API).
//!
//! Readers are permissive: they work on `serde_json::Value`, never panic, and label what they could
//! not read (a cut-off stream, a truncated capture, a malformed body) instead of failing.

mod agent_read;
mod anatomy;
mod anatomy_read;
mod anthropic_read;
mod encoded;
mod gemini_parts;
mod gemini_read;
mod gemini_stream;
mod json_util;
mod mcp_read;
mod model_read;
mod ollama_read;
mod openai_read;
mod responses_read;
mod responses_stream;
#[cfg(test)]
mod stream_memory_tests;
pub(crate) mod text_tool_call;
mod usage;
mod usage_read;

use std::sync::Arc;

use serde_json::Value;

use crate::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport, header_text};

pub use crate::mcp::Era as McpEra;
pub use anatomy::{SystemPart, SystemSource, ToolDef};
pub use mcp_read::{JsonRpcKind, McpMessage, McpReading, sse_message_offsets};
pub use usage::Usage;

/// How a body is to be read: which protocol's JSON (or stream) it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Dialect {
    OllamaChat,
    OllamaGenerate,
    OpenAiChat,
    OpenAiResponses,
    AnthropicMessages,
    /// Gemini `generateContent` / `streamGenerateContent` (Google AI, Vertex AI, Code Assist).
    Gemini,
    /// Gemini `countTokens`: a request to count a prompt's tokens, not a model turn.
    GeminiCountTokens,
    Mcp,
    /// An OpenAPI tool server in front of MCP (mcpo): `openapi.json`, `POST /<server>/<tool>`.
    OpenApiTools,
    Agent,
    Unknown,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::OllamaChat => "ollama.chat",
            Dialect::OllamaGenerate => "ollama.generate",
            Dialect::OpenAiChat => "openai.chat",
            Dialect::OpenAiResponses => "openai.responses",
            Dialect::AnthropicMessages => "anthropic.messages",
            Dialect::Gemini => "gemini.generate",
            Dialect::GeminiCountTokens => "gemini.count_tokens",
            Dialect::Mcp => "mcp",
            Dialect::OpenApiTools => "openapi.tools",
            Dialect::Agent => "agent",
            Dialect::Unknown => "unknown",
        }
    }

    /// Dialects whose requests carry a conversation for a model.
    pub fn is_model_chat(self) -> bool {
        matches!(
            self,
            Dialect::OllamaChat
                | Dialect::OllamaGenerate
                | Dialect::OpenAiChat
                | Dialect::OpenAiResponses
                | Dialect::AnthropicMessages
                | Dialect::Gemini
        )
    }
}

/// Detects a hop's dialect from its route role, method, path, request headers and request body.
pub fn detect(role: Role, method: &str, path: &str, headers: &[Header], body: &[u8]) -> Dialect {
    let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
    if let Some(gemini) = gemini_read::dialect_of_path(path) {
        return gemini;
    }
    if path.ends_with("/api/chat") {
        return Dialect::OllamaChat;
    }
    if path.ends_with("/api/generate") {
        return Dialect::OllamaGenerate;
    }
    if path.ends_with("/chat/completions") {
        return Dialect::OpenAiChat;
    }
    let ws_turn = method == crate::hop::ws_message::TURN_METHOD;
    if path.ends_with("/responses") && (method.eq_ignore_ascii_case("POST") || ws_turn) {
        return Dialect::OpenAiResponses;
    }
    if path.ends_with("/v1/messages") || header_text(headers, "anthropic-version").is_some() {
        return Dialect::AnthropicMessages;
    }
    let mcp_headers = ["mcp-method", "mcp-session-id", "mcp-protocol-version"]
        .iter()
        .any(|name| header_text(headers, name).is_some());
    let json = json_util::parse_lenient(body);
    if mcp_headers || json.as_ref().is_some_and(looks_like_jsonrpc) {
        return Dialect::Mcp;
    }
    match role {
        Role::Mcp if method.eq_ignore_ascii_case("POST") => Dialect::Mcp,
        Role::Agent
            if path.ends_with("/agent")
                || json
                    .as_ref()
                    .is_some_and(|v| v.get("message").is_some_and(Value::is_string)) =>
        {
            Dialect::Agent
        }
        Role::Model => match json {
            Some(v) if v.get("prompt").is_some() => Dialect::OllamaGenerate,
            Some(v) if v.get("messages").is_some() => Dialect::OllamaChat,
            _ => Dialect::Unknown,
        },
        _ => Dialect::Unknown,
    }
}

fn looks_like_jsonrpc(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        Value::Array(items) => !items.is_empty() && items.iter().all(looks_like_jsonrpc),
        _ => false,
    }
}

/// Detects the dialect of a recorded hop (a stdio hop is always MCP).
pub fn detect_hop(start: &HopStart, end: Option<&HopEnd>) -> Dialect {
    if start.transport == Transport::Stdio {
        return Dialect::Mcp;
    }
    let empty = BodyCapture::default();
    let body = end.map_or(&empty, |e| &e.request_body);
    let body = crate::content_encoding::readable(&start.request_headers, body);
    let dialect = detect(
        start.role,
        &start.method,
        &start.path,
        &start.request_headers,
        body.bytes(),
    );
    if dialect == Dialect::Unknown && crate::openapi_tools::is_hop_of_tool_server(start, end) {
        return Dialect::OpenApiTools;
    }
    dialect
}

/// Whether a reading is whole, or why it is not.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Integrity {
    Whole,
    /// The recorder kept only the first bytes of the body (BodyCapture.truncated).
    Truncated {
        kept: u64,
        total: u64,
    },
    /// The stream ended before its end marker (`done:true`, `[DONE]`, `message_stop`).
    CutOff,
    /// The body is not what its dialect says it should be.
    Malformed(String),
    /// Its `Content-Encoding` could not be undone to the end (a cut capture, tracer's reading
    /// bound, corrupt bytes): what this reading is of, as one line.
    PartlyDecoded(String),
}

/// How a tool call reached the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ToolCallForm {
    /// A structured field: `tool_calls`, `tool_use`, MCP `tools/call`.
    Structured,
    /// JSON written in the message text (a small model's `{"tool_calls":[...]}`, fenced or bare).
    TextJson,
    /// Qwen/Hermes `<tool_call>{...}</tool_call>` tags in the message text.
    TextTag,
}

/// One tool call, whatever dialect carried it; `arguments` is always JSON (a string that did not
/// parse is kept as a JSON string, and `arguments_invalid` says so).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    pub id: Option<String>,
    pub name: String,
    pub arguments: Value,
    pub arguments_invalid: bool,
    pub form: ToolCallForm,
}

impl ToolCall {
    /// `name {"arg":"value"}` as one short line.
    pub fn display(&self) -> String {
        let args = match &self.arguments {
            Value::Null => String::new(),
            Value::Object(map) if map.is_empty() => String::new(),
            other => format!(" {other}"),
        };
        format!("{}{args}", self.name)
    }
}

/// One message of a conversation, normalized across dialects. Anthropic `tool_result` blocks
/// become messages with role `tool`, as in Ollama and OpenAI.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ModelMessage {
    pub role: String,
    pub content: String,
    pub thinking: String,
    pub tool_calls: Vec<ToolCall>,
    /// On `tool` messages: which call this answers, and the tool's name when given.
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub is_error: bool,
    /// Bytes of the signature that seals the thinking (Anthropic `signature`, Gemini
    /// `thoughtSignature`), when given.
    pub thinking_signature_bytes: Option<usize>,
    /// Reasoning the API sent only in encrypted or redacted form: its bytes (Anthropic
    /// `redacted_thinking`, Responses `encrypted_content`).
    pub hidden_reasoning_bytes: Option<usize>,
}

/// A request to a model server.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct ModelRequest {
    pub model: Option<String>,
    /// Shared (`Arc`): a trace's requests re-send the same prompt, kept once when read together.
    #[serde(skip)]
    pub system: Option<Arc<str>>,
    /// For `/api/generate` the prompt is given as one `user` message. Each shared, as `system`.
    #[serde(skip)]
    pub messages: Vec<Arc<ModelMessage>>,
    /// The names of the callable tools offered (tools inside a namespace entry counted each).
    pub tools: Vec<String>,
    pub stream: bool,
    /// The system prompt part by part (blocks, `instructions`, system/developer messages).
    pub system_parts: Vec<SystemPart>,
    /// Each callable tool's definition and size, in the order offered.
    pub tool_defs: Vec<ToolDef>,
    /// `cache_control` (or equivalent) marks in the request.
    pub cache_marks: usize,
    /// The request body's size in bytes.
    pub body_bytes: usize,
    /// The answer's format when the request asks for one other than free text: `JSON
    /// (complexity_reasoning, complexity_score)` (Gemini `responseMimeType`/`responseSchema`).
    pub answer_format: Option<String>,
    /// The thinking or reasoning the request asks for, in its own words (`adaptive, effort
    /// high`, `enabled, budget 4096 tokens`, `effort medium, summary auto`).
    pub thinking_mode: Option<String>,
}

impl ModelRequest {
    /// The text of the latest `user` message, if any.
    pub fn latest_user_text(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == "user" && !m.content.trim().is_empty())
            .map(|m| m.content.as_str())
    }

    /// A request of the host's own beside the conversation (routing, a title): it offers no
    /// tools and asks for a structured answer.
    pub fn is_side_request(&self) -> bool {
        self.tools.is_empty() && self.answer_format.is_some()
    }
}

/// Ollama's own timing fields (nanoseconds) from the final object of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OllamaTimings {
    pub total_ns: Option<u64>,
    pub load_ns: Option<u64>,
    pub prompt_eval_count: Option<u64>,
    pub prompt_eval_ns: Option<u64>,
    pub eval_count: Option<u64>,
    pub eval_ns: Option<u64>,
}

impl OllamaTimings {
    /// Output tokens per second of generation (eval_count / eval_duration).
    pub fn tokens_per_second(&self) -> Option<f64> {
        let count = self.eval_count?;
        let ns = self.eval_ns.filter(|ns| *ns > 0)?;
        Some(count as f64 * 1e9 / ns as f64)
    }
}

/// A model server's reply, with any stream reassembled into the message it spells.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelResponse {
    pub model: Option<String>,
    pub message: ModelMessage,
    pub finish_reason: Option<String>,
    pub usage: Usage,
    pub timings: Option<OllamaTimings>,
    /// Records on the wire: NDJSON lines or SSE events (1 for a plain JSON reply).
    pub records: usize,
    pub streamed: bool,
    /// An error reported by the server, in the body or in the middle of a stream.
    pub error: Option<String>,
}

/// `POST /agent {"message": ...}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentRequest {
    pub message: String,
}

/// The agent's answer: its reply text and the tool calls it reports having made.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentReply {
    pub reply: String,
    pub tool_calls: Vec<ToolCall>,
    pub error: Option<String>,
}

/// What a body says, read by its dialect.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    Empty,
    ModelRequest(ModelRequest),
    ModelResponse(std::sync::Arc<ModelResponse>),
    Mcp(McpReading),
    AgentRequest(AgentRequest),
    AgentReply(AgentReply),
    /// JSON this reader does not interpret.
    Json(Value),
    /// Not JSON: the first characters, as text.
    Text(String),
}

/// A reading and how much of it could be trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyReading {
    pub reading: Reading,
    pub integrity: Integrity,
}

/// Both bodies of a hop, read by the hop's dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct HopReading {
    pub dialect: Dialect,
    pub request: BodyReading,
    /// None while the hop is in flight.
    pub response: Option<BodyReading>,
}

/// Reads a request body in the given dialect, its `Content-Encoding` undone first.
pub fn read_request(dialect: Dialect, headers: &[Header], body: &BodyCapture) -> BodyReading {
    let reading = encoded::read_through(headers, body, |body| match dialect {
        Dialect::OllamaChat | Dialect::OllamaGenerate => ollama_read::request(body),
        Dialect::OpenAiChat => openai_read::request(body),
        Dialect::OpenAiResponses => responses_read::request(body),
        Dialect::AnthropicMessages => anthropic_read::request(body),
        Dialect::Gemini => gemini_read::request(body),
        Dialect::Mcp => mcp_read::read(headers, body),
        Dialect::Agent => agent_read::request(body),
        Dialect::GeminiCountTokens | Dialect::OpenApiTools | Dialect::Unknown => {
            json_util::generic(body)
        }
    });
    with_body_size(reading, body)
}

/// A model request knows the size of the body it came in.
fn with_body_size(mut reading: BodyReading, body: &BodyCapture) -> BodyReading {
    if let Reading::ModelRequest(request) = &mut reading.reading {
        let total = usize::try_from(body.total_len).unwrap_or(usize::MAX);
        request.body_bytes = total.max(body.bytes.len());
    }
    reading
}

/// Reads a response body in the given dialect, its `Content-Encoding` undone first.
pub fn read_response(dialect: Dialect, headers: &[Header], body: &BodyCapture) -> BodyReading {
    encoded::read_through(headers, body, |body| match dialect {
        Dialect::OllamaChat | Dialect::OllamaGenerate => ollama_read::response(headers, body),
        Dialect::OpenAiChat => openai_read::response(headers, body),
        Dialect::OpenAiResponses => responses_stream::response(headers, body),
        Dialect::AnthropicMessages => anthropic_read::response(headers, body),
        Dialect::Gemini => gemini_stream::response(headers, body),
        Dialect::Mcp => mcp_read::read(headers, body),
        Dialect::Agent => agent_read::response(body),
        Dialect::GeminiCountTokens | Dialect::OpenApiTools | Dialect::Unknown => {
            json_util::generic(body)
        }
    })
}

/// Detects the dialect of a hop and reads both of its bodies.
pub fn read_hop(start: &HopStart, end: Option<&HopEnd>) -> HopReading {
    let dialect = detect_hop(start, end);
    let empty = BodyCapture::default();
    let request_body = end.map(|e| &e.request_body).unwrap_or(&empty);
    let mut request = read_request(dialect, &start.request_headers, request_body);
    if dialect == Dialect::Gemini {
        gemini_read::add_path_facts(&mut request, &start.path);
    }
    with_response(dialect, request, end)
}

/// A hop's reading from its request's reading (read before, or kept) and its response read now.
pub fn with_response(dialect: Dialect, request: BodyReading, end: Option<&HopEnd>) -> HopReading {
    HopReading {
        dialect,
        request,
        response: end
            .filter(|e| e.state != Some(HopState::InFlight))
            .map(|e| read_response(dialect, &e.response_headers, &e.response_body)),
    }
}
