//! The Ollama dialect: the history as `/api/chat` messages (tool results as `role: tool` with
//! `tool_name`), and the reply read whole or from NDJSON.

use serde_json::Value;

use super::{AnswerSink, ChatError, ModelClient, ModelReply, ModelTool};
use crate::agent::conversation::{AssistantTurn, CallArguments, ModelToolCall, Turn};
use crate::agent::outbound::BodyReader;
use tracer_wire::ollama::{
    ChatRequest, ChatResponse, ChatStreamAssembler, FunctionCall, Message, NDJSON_CONTENT_TYPE,
    ToolCall,
};
use tracer_wire::stream::NdjsonDecoder;

pub(super) fn request_body(
    client: &ModelClient,
    history: &[Turn],
    tools: Option<&[ModelTool]>,
    stream: bool,
) -> Vec<u8> {
    let request = ChatRequest {
        model: client.model.clone(),
        messages: history.iter().map(message).collect(),
        tools: tools.map(super::wire_tools),
        stream: Some(stream),
        format: None,
        options: None,
        think: None,
        keep_alive: client.keep_alive.clone().map(Value::String),
    };
    serde_json::to_vec(&request).unwrap_or_default()
}

fn message(turn: &Turn) -> Message {
    match turn {
        Turn::System(text) => Message::text("system", text.clone()),
        Turn::User(text) => Message::text("user", text.clone()),
        Turn::Assistant(assistant) => Message {
            thinking: assistant.thinking.clone(),
            tool_calls: (!assistant.tool_calls.is_empty()).then(|| {
                assistant
                    .tool_calls
                    .iter()
                    .map(|call| ToolCall {
                        id: call.id.clone(),
                        function: FunctionCall {
                            index: call.index,
                            name: call.name.clone(),
                            arguments: call.arguments.to_ollama(),
                        },
                    })
                    .collect()
            }),
            ..Message::text("assistant", assistant.content.clone())
        },
        Turn::Tool(result) => Message {
            tool_name: Some(result.name.clone()),
            tool_call_id: result.call_id.clone(),
            ..Message::text("tool", result.content.clone())
        },
    }
}

pub(super) async fn read_reply(
    client: &ModelClient,
    mut reader: BodyReader,
    content_type: &str,
    mut sink: Option<&mut AnswerSink>,
) -> Result<ModelReply, ChatError> {
    if !client.streams(content_type, NDJSON_CONTENT_TYPE, sink.is_some()) {
        let not_what = "answered something that is not an /api/chat reply";
        return client.whole_reply(reader, sink, not_what, finish).await;
    }
    let mut decoder = NdjsonDecoder::new();
    let mut assembler = ChatStreamAssembler::new();
    while let Some(lines) = reader.next_records(&mut decoder).await? {
        for line in lines {
            let part: ChatResponse =
                client.parse(&line, "sent a stream line that is not an /api/chat chunk")?;
            if let Some(error) = &part.error {
                return Err(client
                    .failed(format!("reported an error mid-stream: {error}"))
                    .into());
            }
            let shown = assembler.push(part).to_string();
            if let Some(sink) = sink.as_deref_mut() {
                sink.text(&shown).await?;
            }
        }
    }
    if let Some(sink) = sink {
        sink.end_of_reply().await?;
    }
    if assembler.chunks() == 0 {
        return Err(client.failed("sent an empty stream").into());
    }
    if !assembler.is_done() {
        return Err(client
            .failed("the stream ended before its final `done: true` line")
            .into());
    }
    finish(client, assembler.finish())
}

fn finish(client: &ModelClient, response: ChatResponse) -> Result<ModelReply, ChatError> {
    if let Some(error) = response.error {
        return Err(client.failed(format!("reported an error: {error}")).into());
    }
    let message = response
        .message
        .ok_or_else(|| client.failed("answered without a message"))?;
    let tool_calls = message
        .calls()
        .iter()
        .map(|call| ModelToolCall {
            id: call.id.clone(),
            index: call.function.index,
            name: call.function.name.clone(),
            arguments: CallArguments::Json(call.function.arguments.clone()),
        })
        .collect();
    Ok(ModelReply {
        turn: AssistantTurn {
            content: message.content,
            thinking: message.thinking.filter(|t| !t.is_empty()),
            tool_calls,
        },
        model: if response.model.is_empty() {
            client.model.clone()
        } else {
            response.model
        },
        prompt_tokens: response.prompt_eval_count.unwrap_or(0),
        completion_tokens: response.eval_count.unwrap_or(0),
    })
}
