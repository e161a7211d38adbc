//! When a streamed model answer's first tool call was complete: the byte offset of the record
//! that closed it (Anthropic's `content_block_stop` of a `tool_use` block, Responses'
//! `output_item.done` of a function call, Chat Completions' last `tool_calls` delta, a Gemini
//! chunk with a `functionCall`, an Ollama line with `tool_calls`), mapped to a time by the
//! recorded response chunks. Hosts run the tool then, before the stream ends, so numbering puts
//! the answer there. Pure.

use serde_json::Value;

use tracer_wire::hop::{HopEnd, HopStart, Role, header_text};

/// When the first tool call of the hop's streamed answer was complete, if it is one and the
/// recorded chunks tell (the kept body is the whole body as it crossed the wire, not encoded).
pub(crate) fn tool_call_complete_ns(start: &HopStart, end: &HopEnd) -> Option<i64> {
    if start.role != Role::Model || end.chunks.len() < 2 || end.chunks_truncated {
        return None;
    }
    let body = &end.response_body;
    let encoded = header_text(&end.response_headers, "content-encoding")
        .is_some_and(|e| !e.trim().eq_ignore_ascii_case("identity"));
    let wire: u64 = end.chunks.iter().map(|c| c.size).sum();
    if encoded || body.truncated || body.bytes.len() as u64 != wire {
        return None;
    }
    let offset = complete_offset(&body.bytes)?;
    let mut seen = 0u64;
    for chunk in &end.chunks {
        seen += chunk.size;
        if seen >= offset as u64 {
            return Some(start.started_unix_ns + chunk.offset_ns);
        }
    }
    None
}

/// Responses output items the host runs (a `web_search_call` the server ran is not one).
const HOST_RUN_ITEMS: [&str; 3] = ["function_call", "custom_tool_call", "local_shell_call"];

/// The offset just past the record that completed the first tool call, in a stream of records
/// (SSE `data:` lines, or NDJSON lines).
fn complete_offset(body: &[u8]) -> Option<usize> {
    let mut tool_blocks: Vec<i64> = Vec::new();
    let mut last_chat_delta: Option<usize> = None;
    let mut at = 0;
    for line in body.split_inclusive(|b| *b == b'\n') {
        at += line.len();
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        let json = text.strip_prefix("data:").unwrap_or(text).trim();
        if !json.starts_with('{') {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(json) else {
            continue;
        };
        let index = record["index"].as_i64().unwrap_or(-1);
        let item = record["item"]["type"].as_str().unwrap_or("");
        match record["type"].as_str() {
            Some("content_block_start")
                if record["content_block"]["type"].as_str() == Some("tool_use") =>
            {
                tool_blocks.push(index);
            }
            Some("content_block_stop") if tool_blocks.contains(&index) => return Some(at),
            Some("response.output_item.done") if HOST_RUN_ITEMS.contains(&item) => {
                return Some(at);
            }
            _ => {}
        }
        let chat_delta = record["choices"]
            .as_array()
            .is_some_and(|choices| choices.iter().any(|c| c["delta"]["tool_calls"].is_array()));
        if chat_delta {
            last_chat_delta = Some(at);
        } else if last_chat_delta.is_some() {
            return last_chat_delta;
        }
        let gemini_call = record["candidates"].as_array().is_some_and(|candidates| {
            candidates.iter().any(|c| {
                c["content"]["parts"]
                    .as_array()
                    .is_some_and(|parts| parts.iter().any(|p| p["functionCall"].is_object()))
            })
        });
        if gemini_call || record["message"]["tool_calls"].is_array() {
            return Some(at);
        }
    }
    last_chat_delta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stream_shape_names_the_record_that_closed_the_call() {
        let anthropic = b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\"}}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\ndata: {\"type\":\"message_stop\"}\n\n";
        let closed = complete_offset(anthropic).expect("closed");
        assert!(anthropic[..closed].ends_with(b"\"index\":1}\n"));
        let responses = b"data: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"reasoning\"}}\n\ndata: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\"}}\n\ndata: {\"type\":\"response.completed\"}\n\n";
        let closed = complete_offset(responses).expect("closed");
        assert!(responses[..closed].ends_with(b"\"function_call\"}}\n"));
        let chat = b"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
        let closed = complete_offset(chat).expect("closed");
        assert!(chat[..closed].ends_with(b"\"{}\"}}]}}]}\n"));
        assert_eq!(
            complete_offset(b"data: {\"type\":\"message_stop\"}\n\n"),
            None
        );
    }
}
