//! The conversation the agent keeps and resends whole on every model call, in a form neutral to
//! the model API (each model client turns it into its own dialect), plus the `<think>` splitting
//! that keeps a reasoning model's thoughts apart from its answer.

use serde_json::{Map, Value};

/// One turn of the history.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Turn {
    System(String),
    User(String),
    /// The model's own message, kept as it came (its tool calls must stay in the history).
    Assistant(AssistantTurn),
    /// One tool result, answering one of the previous assistant turn's calls.
    Tool(ToolResultTurn),
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AssistantTurn {
    /// The content exactly as the model sent it (`<think>` blocks included).
    pub content: String,
    /// Reasoning the server sent in a separate field (Ollama's `thinking`).
    pub thinking: Option<String>,
    pub tool_calls: Vec<ModelToolCall>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResultTurn {
    /// The id of the call this answers (always set for OpenAI; Ollama's when it sent one).
    pub call_id: Option<String>,
    /// The tool's name as the model called it.
    pub name: String,
    pub content: String,
}

/// A tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelToolCall {
    pub id: Option<String>,
    /// Ollama's `function.index`, replayed as it came.
    pub index: Option<u32>,
    pub name: String,
    pub arguments: CallArguments,
}

/// Tool arguments in the form the model API used: Ollama sends a JSON value, OpenAI a string.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallArguments {
    Json(Value),
    Text(String),
}

impl CallArguments {
    /// The arguments as the JSON object a `tools/call` needs, or what is wrong with them.
    pub(crate) fn to_object(&self) -> Result<Map<String, Value>, String> {
        let value = match self {
            CallArguments::Json(value) => value.clone(),
            CallArguments::Text(text) if text.trim().is_empty() => Value::Object(Map::new()),
            CallArguments::Text(text) => serde_json::from_str(text)
                .map_err(|e| format!("the arguments are not valid JSON ({e}): {text}"))?,
        };
        match value {
            Value::Object(object) => Ok(object),
            Value::Null => Ok(Map::new()),
            other => Err(format!("the arguments must be a JSON object, not {other}")),
        }
    }

    /// The arguments for the agent's reply: the JSON value, or the raw text when it is not JSON.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            CallArguments::Json(value) => value.clone(),
            CallArguments::Text(text) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
        }
    }

    /// As Ollama carries them: a JSON value (a string that is not JSON stays a string).
    pub(crate) fn to_ollama(&self) -> Value {
        self.to_value()
    }

    /// As OpenAI carries them: JSON text, byte-exact when it came as text.
    pub(crate) fn to_openai(&self) -> String {
        match self {
            CallArguments::Text(text) => text.clone(),
            CallArguments::Json(value) => value.to_string(),
        }
    }
}

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Splits a whole reply into (answer, thinking). Everything after the last `</think>` is the
/// answer, even when the opening tag was swallowed (reasoning models' chat templates often
/// put `<think>` in the prompt, so the reply starts inside it); an unclosed `<think>` holds
/// everything after it.
pub(crate) fn split_thinking(content: &str) -> (String, Option<String>) {
    if let Some(at) = content.rfind(CLOSE) {
        let thought = content[..at].replace(OPEN, "").replace(CLOSE, "\n");
        let answer = content[at + CLOSE.len()..].trim_start().to_string();
        let thought = thought.trim().to_string();
        return (answer, (!thought.is_empty()).then_some(thought));
    }
    if let Some(at) = content.find(OPEN) {
        let thought = content[at + OPEN.len()..].trim().to_string();
        let answer = content[..at].trim_end().to_string();
        return (answer, (!thought.is_empty()).then_some(thought));
    }
    (content.to_string(), None)
}

/// Splits streamed text into answer and thinking as it arrives, holding back only what could
/// be the start of a tag that a later chunk completes.
#[derive(Debug, Default)]
pub(crate) struct ThinkFilter {
    in_think: bool,
    held: String,
    answer_started: bool,
}

impl ThinkFilter {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Feeds text; returns (answer text, thinking text) that can be shown now.
    pub(crate) fn push(&mut self, text: &str) -> (String, String) {
        self.held.push_str(text);
        let mut answer = String::new();
        let mut thinking = String::new();
        loop {
            let tag = if self.in_think { CLOSE } else { OPEN };
            if let Some(at) = self.held.find(tag) {
                let before: String = self.held.drain(..at + tag.len()).collect();
                let before = &before[..at];
                if self.in_think {
                    thinking.push_str(before);
                } else {
                    self.emit_answer(before, &mut answer);
                }
                self.in_think = !self.in_think;
                continue;
            }
            let keep = partial_tag_suffix(&self.held, tag);
            let ready: String = self.held.drain(..self.held.len() - keep).collect();
            if self.in_think {
                thinking.push_str(&ready);
            } else {
                self.emit_answer(&ready, &mut answer);
            }
            return (answer, thinking);
        }
    }

    /// Ends the stream: whatever was held back.
    pub(crate) fn finish(&mut self) -> (String, String) {
        let rest = std::mem::take(&mut self.held);
        if self.in_think {
            (String::new(), rest)
        } else {
            let mut answer = String::new();
            self.emit_answer(&rest, &mut answer);
            (answer, String::new())
        }
    }

    /// Answer text; blanks between a closing tag and the answer's first word are dropped.
    fn emit_answer(&mut self, text: &str, out: &mut String) {
        if self.answer_started {
            out.push_str(text);
        } else {
            let trimmed = text.trim_start();
            if !trimmed.is_empty() {
                self.answer_started = true;
                out.push_str(trimmed);
            }
        }
    }
}

/// How many bytes at the end of `text` could begin `tag`.
fn partial_tag_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| {
            text.len() >= n
                && text.is_char_boundary(text.len() - n)
                && tag.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn thinking_is_split_off_whole_replies() {
        assert_eq!(
            split_thinking("<think>add it</think>\n\nDone."),
            ("Done.".to_string(), Some("add it".to_string()))
        );
        assert_eq!(
            split_thinking("swallowed opening</think>Done."),
            ("Done.".to_string(), Some("swallowed opening".to_string()))
        );
        assert_eq!(split_thinking("Plain."), ("Plain.".to_string(), None));
        assert_eq!(
            split_thinking("<think>cut off"),
            (String::new(), Some("cut off".to_string()))
        );
    }

    #[test]
    fn streamed_thinking_is_split_across_chunk_boundaries() {
        let mut filter = ThinkFilter::new();
        let mut answer = String::new();
        let mut thinking = String::new();
        for chunk in ["<thi", "nk>hm", "m</th", "ink>\n\nHel", "lo <", "b>"] {
            let (a, t) = filter.push(chunk);
            answer.push_str(&a);
            thinking.push_str(&t);
        }
        let (a, t) = filter.finish();
        answer.push_str(&a);
        thinking.push_str(&t);
        assert_eq!(answer, "Hello <b>");
        assert_eq!(thinking, "hmm");
    }

    #[test]
    fn arguments_convert_between_dialects() {
        let text = CallArguments::Text("{\"content\": \"buy milk\"}".into());
        assert_eq!(text.to_object().unwrap()["content"], "buy milk");
        assert_eq!(text.to_openai(), "{\"content\": \"buy milk\"}");
        assert_eq!(text.to_ollama(), json!({"content": "buy milk"}));
        let broken = CallArguments::Text("{\"content\": ".into());
        assert!(broken.to_object().unwrap_err().contains("not valid JSON"));
        assert_eq!(broken.to_value(), json!("{\"content\": "));
        assert!(CallArguments::Json(json!([1])).to_object().is_err());
        assert!(
            CallArguments::Text(String::new())
                .to_object()
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            CallArguments::Json(json!({"a": 1})).to_openai(),
            "{\"a\":1}"
        );
    }
}
