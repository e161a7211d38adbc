//! MCP JSON-RPC in both eras: requests, notifications, results, errors, batches, SSE-wrapped replies.

use serde_json::Value;

use super::json_util::{Framing, framing, malformed, parse_lenient, sse_events, str_field, whole};
use super::{BodyReading, Integrity, Reading};
use crate::hop::{BodyCapture, Chunk, Header, header_text};
use crate::mcp::Era;

/// The `_meta` key that carries the protocol version in the modern (stateless) era.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// What a JSON-RPC message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonRpcKind {
    Request,
    Notification,
    Result,
    Error,
    /// JSON that is not a JSON-RPC 2.0 message.
    Invalid,
}

/// One JSON-RPC message, with the MCP fields a reader of the wire asks about.
#[derive(Debug, Clone, PartialEq)]
pub struct McpMessage {
    pub kind: JsonRpcKind,
    pub id: Option<Value>,
    pub method: Option<String>,
    /// `params.name` (tools/call, prompts/get) or `params.uri` (resources/read).
    pub tool_name: Option<String>,
    pub arguments: Option<Value>,
    /// `params._meta.traceparent` (SEP-414).
    pub traceparent: Option<String>,
    pub protocol_version: Option<String>,
    /// The text blocks of a result's `content`, joined.
    pub result_text: Option<String>,
    /// `result.isError == true`: a tool error meant for the model.
    pub is_error: bool,
    pub result_type: Option<String>,
    /// A JSON-RPC `error`: a protocol error meant for the developer.
    pub error_code: Option<i64>,
    pub error_message: Option<String>,
    /// Tool names in a `tools/list` result.
    pub tools: Vec<String>,
    /// `supportedVersions` of a `server/discover` result.
    pub supported_versions: Vec<String>,
    /// The message's `params`, `result` and `error.data` as they were, for the explanations
    /// that name what a method carries (a resource's URI, a prompt's messages, an image's size).
    pub params: Option<Value>,
    pub result: Option<Value>,
    pub error_data: Option<Value>,
}

impl McpMessage {
    /// The JSON-RPC id as text (`1`, `"abc"`).
    pub fn id_text(&self) -> Option<String> {
        self.id.as_ref().map(|id| match id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }
}

/// The messages of one MCP body.
#[derive(Debug, Clone, PartialEq)]
pub struct McpReading {
    pub messages: Vec<McpMessage>,
    /// The body was a JSON array (batching, `2025-03-26`).
    pub batch: bool,
    /// The body was an SSE stream wrapping the messages.
    pub sse: bool,
    /// Legacy (`initialize`, sessions) or modern (stateless `2026-07-28`), when anything tells.
    pub era: Option<Era>,
}

impl McpReading {
    /// The first request or notification.
    pub fn request(&self) -> Option<&McpMessage> {
        self.messages
            .iter()
            .find(|m| matches!(m.kind, JsonRpcKind::Request | JsonRpcKind::Notification))
    }

    /// The first result or error (in an SSE stream, the reply after any notifications).
    pub fn reply(&self) -> Option<&McpMessage> {
        self.messages
            .iter()
            .find(|m| matches!(m.kind, JsonRpcKind::Result | JsonRpcKind::Error))
    }
}

fn message(value: &Value) -> McpMessage {
    let mut out = McpMessage {
        kind: JsonRpcKind::Invalid,
        id: value.get("id").filter(|id| !id.is_null()).cloned(),
        method: str_field(value, "method").map(str::to_string),
        tool_name: None,
        arguments: None,
        traceparent: None,
        protocol_version: None,
        result_text: None,
        is_error: false,
        result_type: None,
        error_code: None,
        error_message: None,
        tools: Vec::new(),
        supported_versions: Vec::new(),
        params: value.get("params").cloned(),
        result: value.get("result").cloned(),
        error_data: value.get("error").and_then(|e| e.get("data")).cloned(),
    };
    if str_field(value, "jsonrpc") != Some("2.0") && value.get("method").is_none() {
        return out;
    }
    let params = value.get("params");
    let meta = params.and_then(|p| p.get("_meta"));
    out.tool_name = params
        .and_then(|p| str_field(p, "name").or_else(|| str_field(p, "uri")))
        .map(str::to_string);
    out.arguments = params.and_then(|p| p.get("arguments")).cloned();
    out.traceparent = meta
        .and_then(|m| str_field(m, "traceparent"))
        .map(str::to_string);
    out.protocol_version = meta
        .and_then(|m| str_field(m, META_VERSION))
        .or_else(|| params.and_then(|p| str_field(p, "protocolVersion")))
        .map(str::to_string);
    if let Some(result) = value.get("result") {
        out.kind = JsonRpcKind::Result;
        out.is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        out.result_type = str_field(result, "resultType").map(str::to_string);
        if out.protocol_version.is_none() {
            out.protocol_version = str_field(result, "protocolVersion").map(str::to_string);
        }
        if let Some(Value::Array(blocks)) = result.get("content") {
            let texts: Vec<&str> = blocks.iter().filter_map(|b| str_field(b, "text")).collect();
            out.result_text = Some(texts.join("\n"));
        }
        if out.result_text.as_deref().is_none_or(str::is_empty)
            && let Some(structured) = result.get("structuredContent")
        {
            out.result_text = Some(structured.to_string());
        }
        if let Some(Value::Array(versions)) = result.get("supportedVersions") {
            out.supported_versions = versions
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
        }
        if let Some(Value::Array(tools)) = result.get("tools") {
            out.tools = tools
                .iter()
                .filter_map(|t| str_field(t, "name").map(str::to_string))
                .collect();
        }
    } else if let Some(error) = value.get("error") {
        out.kind = JsonRpcKind::Error;
        out.error_code = error.get("code").and_then(Value::as_i64);
        out.error_message = str_field(error, "message").map(str::to_string);
    } else if out.method.is_some() {
        out.kind = if out.id.is_some() {
            JsonRpcKind::Request
        } else {
            JsonRpcKind::Notification
        };
    }
    out
}

fn era(headers: &[Header], messages: &[McpMessage]) -> Option<Era> {
    let modern = |version: &str| Era::of_version(version) == Era::Modern;
    let header_version = header_text(headers, "mcp-protocol-version");
    if header_version.is_some_and(modern)
        || header_text(headers, "mcp-method").is_some()
        || messages.iter().any(|m| {
            m.result_type.is_some()
                || m.method.as_deref() == Some("server/discover")
                || m.protocol_version.as_deref().is_some_and(modern)
                || m.supported_versions.iter().any(|v| modern(v))
                || matches!(m.error_code, Some(-32022..=-32020))
        })
    {
        return Some(Era::Modern);
    }
    if header_version.is_some()
        || header_text(headers, "mcp-session-id").is_some()
        || messages
            .iter()
            .any(|m| m.method.as_deref() == Some("initialize") || m.protocol_version.is_some())
    {
        return Some(Era::Legacy);
    }
    None
}

fn messages_in(value: &Value) -> (Vec<McpMessage>, bool) {
    match value {
        Value::Array(items) => (items.iter().map(message).collect(), true),
        other => (vec![message(other)], false),
    }
}

/// Reads an MCP body: JSON (one message or a batch), NDJSON (stdio), or an SSE stream.
pub(super) fn read(headers: &[Header], body: &BodyCapture) -> BodyReading {
    if body.bytes.trim_ascii().is_empty() {
        return whole(Reading::Empty);
    }
    let mut reading = McpReading {
        messages: Vec::new(),
        batch: false,
        sse: false,
        era: None,
    };
    let mut integrity = Integrity::Whole;
    match framing(headers, &body.bytes) {
        Framing::Sse => {
            reading.sse = true;
            let mut bad = 0usize;
            for (event, is_tail) in sse_events(&body.bytes) {
                if event.data.trim().is_empty() {
                    continue; // the priming event
                }
                match parse_lenient(event.data.as_bytes()) {
                    Some(value) => reading.messages.extend(messages_in(&value).0),
                    None => bad += usize::from(!is_tail),
                }
            }
            if bad > 0 {
                integrity = Integrity::Malformed(format!("{bad} SSE event(s) are not JSON"));
            } else if reading.reply().is_none() {
                integrity = Integrity::CutOff;
            }
        }
        Framing::Json | Framing::Ndjson => {
            let Some(value) = parse_lenient(&body.bytes) else {
                return malformed(&body.bytes, "not JSON-RPC");
            };
            let (messages, batch) = messages_in(&value);
            reading.messages = messages;
            reading.batch = batch;
        }
    }
    if reading
        .messages
        .iter()
        .any(|m| m.kind == JsonRpcKind::Invalid)
        && integrity == Integrity::Whole
    {
        integrity = Integrity::Malformed("not a JSON-RPC 2.0 message".into());
    }
    reading.era = era(headers, &reading.messages);
    BodyReading {
        reading: Reading::Mcp(reading),
        integrity,
    }
}

/// When each message of an SSE body arrived, in the order `read` gives them: the offset (from
/// the hop's start) of the chunk that completed its event, or None past the recorded chunks.
pub fn sse_message_offsets(body: &[u8], chunks: &[Chunk]) -> Vec<Option<i64>> {
    let mut decoder = crate::stream::SseDecoder::new();
    let mut out = Vec::new();
    let mut add = |events: Vec<crate::stream::SseEvent>, at: Option<i64>| {
        for event in events.iter().filter(|e| !e.data.trim().is_empty()) {
            if let Some(value) = parse_lenient(event.data.as_bytes()) {
                out.extend(std::iter::repeat_n(at, messages_in(&value).0.len()));
            }
        }
    };
    let mut position = 0usize;
    for chunk in chunks {
        let size = usize::try_from(chunk.size).unwrap_or(usize::MAX);
        let end = position.saturating_add(size).min(body.len());
        add(decoder.push(&body[position..end]), Some(chunk.offset_ns));
        position = end;
    }
    add(decoder.push(&body[position..]), None);
    add(decoder.finish().into_iter().collect(), None);
    out
}
