//! Gemini replies: one `GenerateContentResponse`, an SSE stream of them (`?alt=sse`), or the
//! JSON-array stream (`[{…},{…}]`, cut short as `[{…},{…`), each chunk maybe wrapped in Code
//! Assist's `{"response": …}`; error bodies `{"error":{"code","message","status"}}`.
//!
//! A chunk with a `finishReason` (or a `promptFeedback.blockReason`, or an error) ends the reply.
//! Tokens (`usageMetadata`): `promptTokenCount` is the whole prompt, its
//! `cachedContentTokenCount` included (`cache_inside_input`); the input also takes
//! `toolUsePromptTokenCount` (the results of built-in tools the model read, which Gemini counts
//! apart from the prompt); the output is `candidatesTokenCount` + `thoughtsTokenCount`, so that,
//! as with OpenAI, the reasoning tokens are a part of the output.

use serde_json::Value;

use super::gemini_parts::{absorb_part, normal_role, parts_of};
use super::json_util::{Framing, framing, str_field, u64_field, whole};
use super::model_read::{object_body, sse_json, stream_reading};
use super::ollama_read::add_text_tool_calls;
use super::{BodyReading, Integrity, ModelMessage, ModelResponse, Reading, Usage};
use crate::hop::{BodyCapture, Header};

/// Reads a reply in whichever of its three shapes it came.
pub(super) fn response(headers: &[Header], body: &BodyCapture) -> BodyReading {
    let start = body.bytes.trim_ascii_start();
    if start.is_empty() {
        return whole(Reading::Empty);
    }
    if start.starts_with(b"[") {
        return array_stream(start);
    }
    if framing(headers, &body.bytes) == Framing::Sse {
        let mut sse = sse_json(&body.bytes);
        let mut reply = Assembly::new(true);
        for event in sse.by_ref() {
            reply.absorb(&event.data);
        }
        let ended = reply.ended;
        return stream_reading(reply.finish(), ended, sse.bad, "chunk");
    }
    object_body(body, |value| {
        let mut reply = Assembly::new(false);
        reply.absorb(value);
        whole(Reading::ModelResponse(std::sync::Arc::new(reply.finish())))
    })
}

/// The JSON-array stream: every whole item read; a missing `]` is a cut, not a malformed body.
fn array_stream(body: &[u8]) -> BodyReading {
    let (items, closed, bad) = array_items(body);
    let mut reply = Assembly::new(true);
    for item in &items {
        reply.absorb(item);
    }
    let ended = reply.ended || closed;
    if items.is_empty() && bad == 0 && !closed {
        return BodyReading {
            reading: Reading::ModelResponse(std::sync::Arc::new(reply.finish())),
            integrity: Integrity::CutOff,
        };
    }
    stream_reading(reply.finish(), ended, bad, "array item")
}

/// The items of `[v, v, …]`, whether the `]` came, and how many items are not JSON (reading
/// stops at the first; an item cut by the end of the body is not counted).
fn array_items(body: &[u8]) -> (Vec<Value>, bool, usize) {
    let mut items = Vec::new();
    let mut rest = body.get(1..).unwrap_or_default();
    loop {
        rest = rest.trim_ascii_start();
        match rest.first() {
            None => return (items, false, 0),
            Some(b']') => return (items, true, 0),
            Some(b',') => {
                rest = &rest[1..];
                continue;
            }
            Some(_) => {}
        }
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                items.push(value);
                rest = &rest[values.byte_offset()..];
            }
            Some(Err(error)) if error.is_eof() => return (items, false, 0),
            Some(Err(_)) => return (items, false, 1),
            None => return (items, false, 0),
        }
    }
}

/// A reply being put together from its chunks.
struct Assembly {
    reply: ModelResponse,
    texts: Vec<String>,
    ended: bool,
}

impl Assembly {
    fn new(streamed: bool) -> Self {
        Self {
            reply: ModelResponse {
                message: ModelMessage {
                    role: "assistant".into(),
                    ..ModelMessage::default()
                },
                streamed,
                ..ModelResponse::default()
            },
            texts: Vec::new(),
            ended: false,
        }
    }

    /// Folds one chunk (a `GenerateContentResponse`, or Code Assist's `{"response": …}`).
    fn absorb(&mut self, chunk: &Value) {
        self.reply.records += 1;
        let chunk = chunk
            .get("response")
            .filter(|r| r.is_object())
            .unwrap_or(chunk);
        if let Some(error) = error_of(chunk) {
            self.reply.error = Some(error);
            self.ended = true;
            return;
        }
        if let Some(version) = str_field(chunk, "modelVersion") {
            self.reply.model = Some(version.to_string());
        }
        if let Some(meta) = chunk.get("usageMetadata") {
            self.reply.usage.update(&usage_of(meta));
        }
        if let Some(reason) = chunk
            .get("promptFeedback")
            .and_then(|f| str_field(f, "blockReason"))
        {
            self.reply.finish_reason = Some(format!("prompt blocked: {reason}"));
            self.ended = true;
        }
        let Some(candidate) = chunk.get("candidates").and_then(|c| c.get(0)) else {
            return;
        };
        if let Some(content) = candidate.get("content") {
            if let Some(role) = str_field(content, "role") {
                self.reply.message.role = normal_role(Some(role));
            }
            for part in parts_of(content) {
                absorb_part(&mut self.reply.message, &mut self.texts, part);
            }
        }
        if let Some(reason) = str_field(candidate, "finishReason") {
            self.reply.finish_reason = Some(reason.to_string());
            self.ended = true;
        }
    }

    fn finish(mut self) -> ModelResponse {
        self.reply.message.content = self.texts.concat();
        add_text_tool_calls(&mut self.reply.message);
        self.reply
    }
}

/// `{"error": {"code": 400, "message": "…", "status": "INVALID_ARGUMENT"}}` as one line.
fn error_of(value: &Value) -> Option<String> {
    let error = value.get("error").filter(|e| !e.is_null())?;
    let Some(fields) = error.as_object() else {
        return Some(
            error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_string),
        );
    };
    let head: Vec<String> = [
        fields
            .get("code")
            .and_then(Value::as_u64)
            .map(|c| c.to_string()),
        fields
            .get("status")
            .and_then(Value::as_str)
            .map(str::to_string),
    ]
    .into_iter()
    .flatten()
    .collect();
    let message = str_field(error, "message").unwrap_or_default();
    Some(match (head.is_empty(), message.is_empty()) {
        (true, _) => message.to_string(),
        (false, true) => head.join(" "),
        (false, false) => format!("{}: {message}", head.join(" ")),
    })
}

/// `usageMetadata` in the shared buckets (see the module's words for the choices).
fn usage_of(meta: &Value) -> Usage {
    let prompt = u64_field(meta, "promptTokenCount");
    let tool_prompt = u64_field(meta, "toolUsePromptTokenCount");
    let candidates = u64_field(meta, "candidatesTokenCount");
    let thoughts = u64_field(meta, "thoughtsTokenCount");
    let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    Usage {
        input_tokens: sum(prompt, tool_prompt),
        output_tokens: sum(candidates, thoughts),
        cache_read_tokens: u64_field(meta, "cachedContentTokenCount"),
        reasoning_tokens: thoughts,
        cache_inside_input: true,
        ..Usage::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(content_type: &str, body: &str) -> (ModelResponse, Integrity) {
        let headers = [Header::new("content-type", content_type)];
        let reading = response(&headers, &BodyCapture::whole(body.as_bytes().to_vec()));
        match reading.reading {
            Reading::ModelResponse(reply) => {
                (std::sync::Arc::unwrap_or_clone(reply), reading.integrity)
            }
            other => panic!("not a reply: {other:?}"),
        }
    }

    const THOUGHT: &str = r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hmm.","thought":true}]}}],"usageMetadata":{"promptTokenCount":100,"thoughtsTokenCount":7}}"#;
    const CALL: &str = r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"append","args":{"content":"milk"}},"thoughtSignature":"AAAABBBB"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":60,"candidatesTokenCount":5,"thoughtsTokenCount":7,"toolUsePromptTokenCount":3},"modelVersion":"gemini-2.5-pro-001"}"#;

    #[test]
    fn an_array_stream_reads_whole_and_cut_but_never_malformed() {
        let body = format!("[{THOUGHT},\r\n{CALL}]");
        let (reply, integrity) = read("application/json", &body);
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!((reply.records, reply.streamed), (2, true));
        assert_eq!(reply.message.thinking, "Hmm.");
        assert_eq!(reply.message.thinking_signature_bytes, Some(6));
        assert_eq!(
            reply.message.tool_calls[0].display(),
            "append {\"content\":\"milk\"}"
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("STOP"));
        assert_eq!(reply.model.as_deref(), Some("gemini-2.5-pro-001"));
        let usage = reply.usage;
        assert_eq!(usage.input_tokens, Some(103));
        assert_eq!(usage.cache_read_tokens, Some(60));
        assert_eq!(usage.output_tokens, Some(12));
        assert_eq!(usage.reasoning_tokens, Some(7));
        assert!(usage.cache_inside_input);
        assert_eq!(usage.prompt_total(), Some(103));
        for cut in [
            1,
            20,
            THOUGHT.len() + 1,
            THOUGHT.len() + 3,
            THOUGHT.len() + 40,
        ] {
            let (_, integrity) = read("application/json", &body[..cut]);
            assert_eq!(
                integrity,
                Integrity::CutOff,
                "cut at {cut}: {}",
                &body[..cut]
            );
        }
        let (_, integrity) = read("application/json", &format!("[{THOUGHT}, nonsense"));
        assert!(
            matches!(integrity, Integrity::Malformed(_)),
            "{integrity:?}"
        );
    }

    #[test]
    fn an_sse_stream_ends_at_its_finish_reason() {
        let body = format!("data: {THOUGHT}\r\n\r\ndata: {CALL}\r\n\r\n");
        let (reply, integrity) = read("text/event-stream", &body);
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!(reply.message.tool_calls.len(), 1);
        let (reply, integrity) = read("text/event-stream", &format!("data: {THOUGHT}\r\n\r\n"));
        assert_eq!(integrity, Integrity::CutOff);
        assert_eq!(reply.message.thinking, "Hmm.");
    }

    #[test]
    fn errors_blocks_and_code_assist_wrappers_are_read() {
        let (reply, integrity) = read(
            "application/json",
            r#"{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED"}}"#,
        );
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!(
            reply.error.as_deref(),
            Some("429 RESOURCE_EXHAUSTED: Quota exceeded.")
        );
        let (reply, _) = read(
            "application/json",
            r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#,
        );
        assert_eq!(
            reply.finish_reason.as_deref(),
            Some("prompt blocked: SAFETY")
        );
        let wrapped = format!(r#"data: {{"response":{CALL},"traceId":"t"}}"#);
        let (reply, integrity) = read("text/event-stream", &format!("{wrapped}\n\n"));
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!(reply.message.tool_calls[0].name, "append");
        assert_eq!(reply.usage.cache_read_tokens, Some(60));
    }
}
