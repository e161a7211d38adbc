//! The OpenAI dialect: the history as chat-completion messages (arguments as JSON strings, tool
//! results answering a `tool_call_id`), a bearer key, and the reply read whole or from SSE.

use http::{HeaderMap, HeaderValue, header};

use super::{AnswerSink, ChatError, ModelClient, ModelReply, ModelTool};
use crate::agent::conversation::{AssistantTurn, CallArguments, ModelToolCall, Turn};
use crate::agent::outbound::BodyReader;
use tracer_wire::ids::random_hex_id;
use tracer_wire::openai::{
    ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatMessage, ChunkAssembler,
    FunctionCall, STREAM_DONE, StreamOptions, ToolCall,
};
use tracer_wire::stream::SseDecoder;

pub(super) fn auth_headers(api_key: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(key) = api_key.filter(|k| !k.is_empty())
        && let Ok(value) = HeaderValue::from_str(&format!("Bearer {key}"))
    {
        headers.insert(header::AUTHORIZATION, value);
    }
    headers
}

pub(super) fn request_body(
    client: &ModelClient,
    history: &[Turn],
    tools: Option<&[ModelTool]>,
    stream: bool,
) -> Vec<u8> {
    let request = ChatCompletionRequest {
        model: client.model.clone(),
        messages: history.iter().map(message).collect(),
        tools: tools.map(super::wire_tools),
        stream: stream.then_some(true),
        // Token counts in a stream come only when asked for (one extra chunk before [DONE]).
        stream_options: stream.then_some(StreamOptions {
            include_usage: Some(true),
        }),
        ..ChatCompletionRequest::default()
    };
    serde_json::to_vec(&request).unwrap_or_default()
}

fn message(turn: &Turn) -> ChatMessage {
    match turn {
        Turn::System(text) => ChatMessage::text("system", text.clone()),
        Turn::User(text) => ChatMessage::text("user", text.clone()),
        // Content is "" rather than null with tool calls: llama.cpp's server rejects null.
        Turn::Assistant(assistant) => ChatMessage {
            tool_calls: (!assistant.tool_calls.is_empty()).then(|| {
                assistant
                    .tool_calls
                    .iter()
                    .map(|call| ToolCall {
                        id: call.id.clone().unwrap_or_default(),
                        kind: "function".to_string(),
                        function: FunctionCall {
                            name: call.name.clone(),
                            arguments: call.arguments.to_openai(),
                        },
                    })
                    .collect()
            }),
            ..ChatMessage::text("assistant", assistant.content.clone())
        },
        Turn::Tool(result) => ChatMessage {
            tool_call_id: Some(result.call_id.clone().unwrap_or_default()),
            ..ChatMessage::text("tool", result.content.clone())
        },
    }
}

pub(super) async fn read_reply(
    client: &ModelClient,
    mut reader: BodyReader,
    content_type: &str,
    mut sink: Option<&mut AnswerSink>,
) -> Result<ModelReply, ChatError> {
    if !client.streams(content_type, "text/event-stream", sink.is_some()) {
        let not_what = "answered something that is not a chat completion";
        return client.whole_reply(reader, sink, not_what, finish).await;
    }
    let mut decoder = SseDecoder::new();
    let mut assembler = ChunkAssembler::new();
    let mut done = false;
    while !done && let Some(events) = reader.next_records(&mut decoder).await? {
        for event in events {
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            if data == STREAM_DONE {
                done = true;
                break;
            }
            let part: ChatCompletionChunk = client.parse(
                data.as_bytes(),
                "sent an event that is not a chat completion chunk",
            )?;
            if let Some(error) = &part.error {
                let detail = format!("reported an error mid-stream: {}", error.message);
                return Err(client.failed(detail).into());
            }
            let shown = assembler.push(part);
            if let Some(sink) = sink.as_deref_mut() {
                sink.text(&shown).await?;
            }
        }
    }
    if let Some(sink) = sink {
        sink.end_of_reply().await?;
    }
    if !done {
        return Err(client
            .failed("the stream ended before `data: [DONE]`")
            .into());
    }
    finish(client, assembler.finish())
}

fn finish(client: &ModelClient, completion: ChatCompletion) -> Result<ModelReply, ChatError> {
    let choice = completion
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| client.failed("answered with no choices"))?;
    let message = choice.message;
    let tool_calls = message
        .calls()
        .iter()
        .map(|call| ModelToolCall {
            // A call without an id could not be answered: give it one, used in the history too.
            id: Some(if call.id.is_empty() {
                format!("call_{}", random_hex_id(12))
            } else {
                call.id.clone()
            }),
            index: None,
            name: call.function.name.clone(),
            arguments: CallArguments::Text(call.function.arguments.clone()),
        })
        .collect();
    let usage = completion.usage.unwrap_or_default();
    Ok(ModelReply {
        turn: AssistantTurn {
            content: message.content_text(),
            thinking: message.reasoning_text().map(str::to_string),
            tool_calls,
        },
        model: if completion.model.is_empty() {
            client.model.clone()
        } else {
            completion.model
        },
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
    })
}
