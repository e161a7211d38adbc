//! Tool calls a model wrote as text in `content`: Qwen/Hermes `<tool_call>` tags, or JSON such as
//! the `{"tool_calls":[{"name":…,"parameters":{…}}]}` (bare or in a Markdown code fence).

use serde_json::Value;

use super::json_util::arguments_from;
use super::{ToolCall, ToolCallForm};

const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";

/// Finds the tool calls written as text in a message's content (empty when there are none).
pub(crate) fn find(content: &str) -> Vec<ToolCall> {
    let tagged = tagged_calls(content);
    if !tagged.is_empty() {
        return tagged;
    }
    let Some(value) = json_in(content) else {
        return Vec::new();
    };
    calls_in_value(&value, ToolCallForm::TextJson)
}

/// `<tool_call>{json}</tool_call>` segments; a last segment without its closing tag still counts.
fn tagged_calls(content: &str) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    let mut rest = content;
    while let Some(at) = rest.find(OPEN_TAG) {
        let after = &rest[at + OPEN_TAG.len()..];
        let (inner, next) = match after.find(CLOSE_TAG) {
            Some(end) => (&after[..end], &after[end + CLOSE_TAG.len()..]),
            None => (after, ""),
        };
        if let Ok(value) = serde_json::from_str::<Value>(inner.trim()) {
            calls.extend(calls_in_value(&value, ToolCallForm::TextTag));
        }
        rest = next;
    }
    calls
}

/// The JSON document a content holds: the whole text, or the inside of a ``` fence.
fn json_in(content: &str) -> Option<Value> {
    let trimmed = content.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        return Some(value);
    }
    let fence_start = trimmed.find("```")?;
    let after = &trimmed[fence_start + 3..];
    let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
    let body = &after[body_start..];
    let body = body.find("```").map(|end| &body[..end]).unwrap_or(body);
    serde_json::from_str::<Value>(body.trim()).ok()
}

/// Tool calls in a JSON value: `{"tool_calls":[…]}`, `[…]`, or one `{"name", "arguments"}` call.
fn calls_in_value(value: &Value, form: ToolCallForm) -> Vec<ToolCall> {
    match value {
        Value::Array(items) => items.iter().filter_map(|v| one_call(v, form)).collect(),
        Value::Object(map) => match map.get("tool_calls") {
            Some(Value::Array(items)) => items.iter().filter_map(|v| one_call(v, form)).collect(),
            _ => one_call(value, form).into_iter().collect(),
        },
        _ => Vec::new(),
    }
}

/// One call: `{"name", "arguments"|"parameters"}` or `{"function": {"name", "arguments"}}`.
fn one_call(value: &Value, form: ToolCallForm) -> Option<ToolCall> {
    let call = value
        .get("function")
        .filter(|f| f.is_object())
        .unwrap_or(value);
    let name = call.get("name")?.as_str()?.to_string();
    let args = call.get("arguments").or_else(|| call.get("parameters"));
    let (arguments, arguments_invalid) = arguments_from(args);
    Some(ToolCall {
        id: None,
        name,
        arguments,
        arguments_invalid,
        form,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn qwen_tags_are_found_even_without_the_closing_tag() {
        let calls = find(
            "<tool_call>\n{\"name\": \"append\", \"arguments\": {\"content\": \"buy milk\"}}\n</tool_call>\n<tool_call>{\"name\":\"read\",\"arguments\":{}}",
        );
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "append");
        assert_eq!(calls[0].arguments, json!({"content": "buy milk"}));
        assert_eq!(calls[0].form, ToolCallForm::TextTag);
        assert_eq!(calls[1].name, "read");
    }

    #[test]
    fn seed_002_fenced_json_with_parameters() {
        let content = "```json\n{\n \"tool_calls\": [\n {\n \"name\": \"tool_get_phonenumber_post\",\n \"parameters\": {\n \"name\": \"Joshua Wilson\"\n }\n }\n ]\n}\n```";
        let calls = find(content);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "tool_get_phonenumber_post");
        assert_eq!(calls[0].arguments, json!({"name": "Joshua Wilson"}));
        assert_eq!(calls[0].form, ToolCallForm::TextJson);
    }

    #[test]
    fn plain_prose_and_empty_lists_have_no_calls() {
        assert!(find("I've added \"buy milk\" to your notes.").is_empty());
        assert!(find("{\"tool_calls\": []}").is_empty());
        assert!(find("{\"answer\": 42}").is_empty());
        assert!(find("<tool_call>not json</tool_call>").is_empty());
    }
}
