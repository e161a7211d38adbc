//! Folds a streamed chat completion (SSE chunks) back into the one message it spells.
//!
//! Tool-call fragments are keyed on `(index, id)`: some servers reuse index 0 for parallel calls
//! and tell them apart only by `id`, and llama.cpp repeats `id` and `name` in every fragment, so a
//! repeated name is not appended. `arguments` fragments are concatenated as they come.

use super::MessageContent;
use super::{
    ChatCompletion, ChatCompletionChunk, ChatMessage, Choice, FunctionCall, ToolCall, Usage,
};

#[derive(Debug, Default)]
struct PartialCall {
    index: u32,
    id: String,
    name: String,
    arguments: String,
}

/// Accumulates the chunks of choice 0 (the only one a chat host asks for).
#[derive(Debug, Default)]
pub struct ChunkAssembler {
    id: String,
    model: String,
    created: u64,
    role: Option<String>,
    content: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    chunks: usize,
}

impl ChunkAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one chunk; returns the answer text it added (what a live view would show).
    pub fn push(&mut self, chunk: ChatCompletionChunk) -> String {
        self.chunks += 1;
        if self.id.is_empty() {
            self.id = chunk.id;
        }
        if self.model.is_empty() {
            self.model = chunk.model;
        }
        if self.created == 0 {
            self.created = chunk.created;
        }
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        let mut added = String::new();
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            let delta = choice.delta;
            if delta.role.is_some() {
                self.role = delta.role;
            }
            if let Some(text) = delta.content {
                self.content.push_str(&text);
                added.push_str(&text);
            }
            if let Some(text) = delta.reasoning.or(delta.reasoning_content) {
                self.reasoning.push_str(&text);
            }
            for fragment in delta.tool_calls.unwrap_or_default() {
                self.add_fragment(fragment);
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        added
    }

    fn add_fragment(&mut self, fragment: super::ToolCallChunk) {
        let function = fragment.function.unwrap_or_default();
        let existing = self
            .calls
            .iter()
            .rposition(|call| call.index == fragment.index);
        let starts_new = match (existing, fragment.id.as_deref()) {
            (None, _) => true,
            (Some(at), Some(id)) => !self.calls[at].id.is_empty() && self.calls[at].id != id,
            (Some(_), None) => false,
        };
        if starts_new {
            self.calls.push(PartialCall {
                index: fragment.index,
                ..PartialCall::default()
            });
        }
        let Some(call) = self
            .calls
            .iter_mut()
            .rev()
            .find(|c| c.index == fragment.index)
        else {
            return;
        };
        if call.id.is_empty()
            && let Some(id) = fragment.id
        {
            call.id = id;
        }
        if call.name.is_empty()
            && let Some(name) = function.name
        {
            call.name = name;
        }
        if let Some(arguments) = function.arguments {
            call.arguments.push_str(&arguments);
        }
    }

    /// The reply as if it had been sent whole.
    pub fn finish(self) -> ChatCompletion {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .map(|call| ToolCall {
                id: call.id,
                kind: "function".to_string(),
                function: FunctionCall {
                    name: call.name,
                    arguments: call.arguments,
                },
            })
            .collect();
        let message = ChatMessage {
            role: self.role.unwrap_or_else(|| "assistant".to_string()),
            content: Some(MessageContent::Text(self.content)),
            tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            ..ChatMessage::default()
        };
        ChatCompletion {
            id: self.id,
            object: "chat.completion".to_string(),
            created: self.created,
            model: self.model,
            choices: vec![Choice {
                index: 0,
                message,
                finish_reason: self.finish_reason,
            }],
            usage: self.usage,
            system_fingerprint: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn assemble(chunks: &[Value]) -> ChatCompletion {
        let mut assembler = ChunkAssembler::new();
        for chunk in chunks {
            assembler.push(serde_json::from_value(chunk.clone()).unwrap());
        }
        assembler.finish()
    }

    fn delta(delta: Value) -> Value {
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
    }

    #[test]
    fn concatenates_argument_fragments_per_index() {
        let reply = assemble(&[
            delta(
                json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                "id": "call_c91", "type": "function", "function": {"name": "GetWeatherArgs", "arguments": ""}}]}),
            ),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\""}}]})),
            delta(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "city\":\"Edinburgh\"}"}}]}),
            ),
            json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 76, "completion_tokens": 24, "total_tokens": 100}}),
        ]);
        let choice = &reply.choices[0];
        assert_eq!(choice.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(choice.message.calls()[0].id, "call_c91");
        assert_eq!(choice.message.calls()[0].function.name, "GetWeatherArgs");
        assert_eq!(
            choice.message.calls()[0].function.arguments,
            r#"{"city":"Edinburgh"}"#
        );
        assert_eq!(reply.usage.map(|u| u.total_tokens), Some(100));
    }

    #[test]
    fn repeated_names_are_not_appended_and_reused_indexes_split_by_id() {
        let reply = assemble(&[
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read", "arguments": "{"}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read", "arguments": "}"}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "clear", "arguments": "{}"}}]}),
            ),
        ]);
        let calls = reply.choices[0].message.calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (
                calls[0].function.name.as_str(),
                calls[0].function.arguments.as_str()
            ),
            ("read", "{}")
        );
        assert_eq!(
            (calls[1].id.as_str(), calls[1].function.name.as_str()),
            ("b", "clear")
        );
    }

    #[test]
    fn text_and_reasoning_are_kept_apart() {
        let mut assembler = ChunkAssembler::new();
        let shown: String = [
            delta(json!({"role": "assistant", "content": ""})),
            delta(json!({"reasoning": "hmm"})),
            delta(json!({"content": "Hel"})),
            delta(json!({"content": "lo"})),
        ]
        .into_iter()
        .map(|c| assembler.push(serde_json::from_value(c).unwrap()))
        .collect();
        assert_eq!(shown, "Hello");
        let reply = assembler.finish();
        assert_eq!(reply.choices[0].message.content_text(), "Hello");
        assert_eq!(reply.choices[0].message.reasoning_text(), Some("hmm"));
    }
}
