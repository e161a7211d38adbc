//! A Responses API stream (`response.output_text.delta`, `response.function_call_arguments.delta`,
//! `response.output_item.done`, `response.completed`, ...) reassembled into the reply it spells;
//! a `response.completed` whose `output` is empty is rebuilt from the `output_item.done` events.

use serde_json::Value;

use super::json_util::{str_field, u64_field};
use super::model_read::{error_text, sse_json, sse_or_object, stream_reading, streamed_call};
use super::ollama_read::add_text_tool_calls;
use super::responses_read::{function_call, output_message, reply_of, response_object};
use super::{BodyReading, ToolCall};
use crate::hop::{BodyCapture, Header};

/// A function call being assembled from its events, keyed by its item id.
struct PartialCall {
    item_id: String,
    output_index: Option<u64>,
    call: ToolCall,
    arguments: String,
}

/// Reads a reply: a `response` object, or its stream of events.
pub(super) fn response(headers: &[Header], body: &BodyCapture) -> BodyReading {
    sse_or_object(headers, body, stream, response_object)
}

pub(super) fn stream(body: &[u8]) -> BodyReading {
    let mut sse = sse_json(body);
    let mut reply = sse.reply();
    let mut calls: Vec<PartialCall> = Vec::new();
    let mut last: Option<Value> = None;
    let mut done_items: Vec<Value> = Vec::new();
    let mut ended = false;
    for event in sse.by_ref() {
        let data = &event.data;
        let item_id = str_field(data, "item_id").unwrap_or_default();
        let output_index = u64_field(data, "output_index");
        let find = |calls: &mut Vec<PartialCall>| {
            calls
                .iter_mut()
                .rev()
                .position(|c| {
                    (!item_id.is_empty() && c.item_id == item_id)
                        || (item_id.is_empty()
                            && output_index.is_some()
                            && c.output_index == output_index)
                })
                .map(|from_end| calls.len() - 1 - from_end)
        };
        match event.kind() {
            Some("response.created" | "response.in_progress") => {
                if let Some(model) = data.get("response").and_then(|r| str_field(r, "model")) {
                    reply.model = Some(model.to_string());
                }
            }
            Some("response.output_item.added" | "response.output_item.done") => {
                let item = data.get("item").cloned().unwrap_or_default();
                if event.kind() == Some("response.output_item.done") {
                    done_items.push(item.clone());
                }
                if str_field(&item, "type") != Some("function_call") {
                    continue;
                }
                let Some(call) = function_call(&item) else {
                    continue;
                };
                let id = str_field(&item, "id").unwrap_or_default().to_string();
                let done_arguments = str_field(&item, "arguments").unwrap_or_default();
                match calls.iter_mut().find(|c| c.item_id == id) {
                    Some(known) => {
                        if !done_arguments.is_empty() {
                            known.arguments = done_arguments.to_string();
                        }
                        known.call.name = call.name;
                        known.call.id = call.id;
                    }
                    None => calls.push(PartialCall {
                        item_id: id,
                        output_index,
                        call,
                        arguments: done_arguments.to_string(),
                    }),
                }
            }
            Some("response.output_text.delta") => {
                reply
                    .message
                    .content
                    .push_str(str_field(data, "delta").unwrap_or_default());
            }
            Some("response.reasoning_summary_text.delta" | "response.reasoning_text.delta") => {
                reply
                    .message
                    .thinking
                    .push_str(str_field(data, "delta").unwrap_or_default());
            }
            Some("response.function_call_arguments.delta") => {
                if let Some(i) = find(&mut calls) {
                    calls[i]
                        .arguments
                        .push_str(str_field(data, "delta").unwrap_or_default());
                }
            }
            Some("response.function_call_arguments.done") => {
                if let (Some(i), Some(arguments)) = (find(&mut calls), str_field(data, "arguments"))
                {
                    calls[i].arguments = arguments.to_string();
                }
            }
            Some("response.completed" | "response.failed" | "response.incomplete") => {
                ended = true;
                last = data.get("response").cloned();
            }
            Some("error") => {
                reply.error = str_field(data, "message")
                    .map(str::to_string)
                    .or_else(|| error_text(data));
            }
            _ => {}
        }
    }
    let streamed_text = std::mem::take(&mut reply.message.content);
    let streamed_thinking = std::mem::take(&mut reply.message.thinking);
    if let Some(last) = &last {
        reply_of(last, &mut reply);
    }
    let output_empty = last
        .as_ref()
        .and_then(|l| l.get("output"))
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if output_empty && !done_items.is_empty() {
        // The end event left its `output` out (or the stream was cut before it): the items
        // that were each reported done are the reply.
        reply.message = output_message(&done_items);
    }
    // What streamed is what the client saw; the final object fills in what did not stream.
    if !streamed_text.is_empty() || reply.message.content.is_empty() {
        reply.message.content = streamed_text;
    }
    if !streamed_thinking.is_empty() {
        reply.message.thinking = streamed_thinking;
    }
    if !calls.is_empty() {
        reply.message.tool_calls = calls
            .into_iter()
            .map(|partial| streamed_call(partial.call.id, partial.call.name, partial.arguments))
            .collect();
    }
    add_text_tool_calls(&mut reply.message);
    let ended = ended || reply.error.is_some();
    reply.records = sse.records;
    stream_reading(reply, ended, sse.bad, "response event")
}
