//! One message of a model request in a few words, for the lines that say what was added,
//! removed or edited between two requests: its role, its kind (text, tool call with its name,
//! tool result with the call it answers, image, thinking, …) and its first words, bounded and
//! made safe for a terminal. Reads any of the APIs' messages (Anthropic, chat completions,
//! Responses items, Gemini contents, Ollama).

use serde_json::Value;

use crate::words::shorten;

/// How many characters of a message's first words a note quotes.
const FIRST_WORDS: usize = 60;

/// How many characters of a tool call's id a note shows.
const ID_CHARS: usize = 16;

/// The note of message `index` of `messages` (a request's messages, in order): `user, text:
/// "buy milk"`, `assistant, thinking + tool call Bash: {"command":"ls"}`, `user, tool result for
/// Bash (toolu_01…): "total 48"`. Earlier messages name the call a result answers.
pub(crate) fn message_note(messages: &[&Value], index: usize) -> String {
    let (about, words) = note_parts(messages, index);
    match words {
        Some(words) => format!("{about}: {words}"),
        None => about,
    }
}

/// A message's role and kinds (`user, text`): what an edited message's line names.
pub(crate) fn message_about(messages: &[&Value], index: usize) -> String {
    note_parts(messages, index).0
}

/// A message's role and kinds, and its first words quoted.
fn note_parts(messages: &[&Value], index: usize) -> (String, Option<String>) {
    let Some(message) = messages.get(index).copied() else {
        return ("(no message)".to_string(), None);
    };
    let earlier = &messages[..index];
    let role = role_of(message);
    let mut kinds: Vec<String> = Vec::new();
    let mut words: Vec<(u8, String)> = Vec::new();
    for block in blocks(message) {
        let (kind, text, rank) = block_kind(block, earlier);
        if kinds.last() != Some(&kind) {
            kinds.push(kind);
        }
        if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
            words.push((rank, text));
        }
    }
    // The first words of the block that says most: text, then a tool's result, a call's
    // arguments, thinking.
    words.sort_by_key(|(rank, _)| *rank);
    // Kinds in order, a run of the same kind named once.
    let kinds = if kinds.is_empty() {
        "empty".to_string()
    } else {
        kinds.join(" + ")
    };
    let about = format!("{role}, {kinds}");
    (about, words.first().map(|(_, text)| quoted(text)))
}

/// A message's role, or the role its item type stands for (Responses items carry none).
fn role_of(message: &Value) -> String {
    if let Some(role) = message.get("role").and_then(Value::as_str) {
        return shorten(role, 20);
    }
    match message.get("type").and_then(Value::as_str) {
        Some("function_call_output" | "custom_tool_call_output" | "mcp_call_output") => "tool",
        Some(_) => "assistant",
        None => "(no role)",
    }
    .to_string()
}

/// A message's blocks: its content array (or Gemini's parts), its tool calls (chat), or itself
/// as one block (a string content, a Responses item).
fn blocks(message: &Value) -> Vec<&Value> {
    let mut out: Vec<&Value> = Vec::new();
    let content = message.get("content").or_else(|| message.get("parts"));
    match content {
        Some(Value::Array(items)) if message.get("type").is_none_or(|t| t == "message") => {
            out.extend(items)
        }
        Some(Value::Null) | None if message.get("type").is_none() => {}
        _ => out.push(message),
    }
    if let Some(Value::Array(calls)) = message.get("tool_calls") {
        out.extend(calls);
    }
    if let Some(Value::Array(images)) = message.get("images") {
        out.extend(images.iter().map(|_| &IMAGE));
    }
    out
}

/// Ollama's `images` (base64 strings), each read as an image block.
static IMAGE: Value = Value::Null;

/// A block's kind, its text, and how much its text says of the message (lower says more).
fn block_kind(block: &Value, earlier: &[&Value]) -> (String, Option<String>, u8) {
    if std::ptr::eq(block, &IMAGE) {
        return ("image".into(), None, 9);
    }
    let text_field = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_string);
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    // A message whose content is a string: the message itself is its one block.
    if let Some(Value::String(text)) = block.get("content")
        && (kind.is_empty() || kind == "message")
    {
        return match block.get("role").and_then(Value::as_str) {
            Some("tool") => (result_kind(block, earlier), Some(text.clone()), 1),
            _ => ("text".into(), Some(text.clone()), 0),
        };
    }
    match kind {
        "text" | "input_text" | "output_text" => ("text".into(), text_field("text"), 0),
        "refusal" => ("refusal".into(), text_field("refusal"), 0),
        "image" | "image_url" | "input_image" => ("image".into(), None, 9),
        "document" | "file" | "input_file" => ("document".into(), None, 9),
        "input_audio" => ("audio".into(), None, 9),
        "thinking" => ("thinking".into(), text_field("thinking"), 3),
        "redacted_thinking" => ("redacted thinking".into(), None, 9),
        "reasoning" => ("thinking".into(), reasoning_summary(block), 3),
        "tool_use" | "server_tool_use" | "function_call" | "custom_tool_call" | "mcp_call" => {
            let name = text_field("name").unwrap_or_else(|| "?".into());
            let input = block.get("input").or_else(|| block.get("arguments"));
            (
                format!("tool call {}", short(&name, 40)),
                input.map(json_words),
                2,
            )
        }
        "function" if block.get("function").is_some() => {
            let name = (block.pointer("/function/name").and_then(Value::as_str)).unwrap_or("?");
            let arguments = block.pointer("/function/arguments").map(json_words);
            (format!("tool call {}", short(name, 40)), arguments, 2)
        }
        "tool_result" | "function_call_output" | "custom_tool_call_output" => {
            let output = block.get("content").or_else(|| block.get("output"));
            (result_kind(block, earlier), output.map(content_words), 1)
        }
        "" => gemini_part(block),
        other => (short(other, 30), None, 9),
    }
}

/// A Gemini part (`text`, `functionCall`, `functionResponse`, `inlineData`, a thought).
fn gemini_part(part: &Value) -> (String, Option<String>, u8) {
    let text = part.get("text").and_then(Value::as_str).map(str::to_string);
    if part.get("thought").and_then(Value::as_bool) == Some(true) {
        return ("thinking".into(), text, 3);
    }
    if let Some(text) = text {
        return ("text".into(), Some(text), 0);
    }
    if let Some(call) = part.get("functionCall") {
        let name = call.get("name").and_then(Value::as_str).unwrap_or("?");
        let args = call.get("args").map(json_words);
        return (format!("tool call {}", short(name, 40)), args, 2);
    }
    if let Some(answer) = part.get("functionResponse") {
        let name = answer.get("name").and_then(Value::as_str).unwrap_or("?");
        let response = answer.get("response").map(json_words);
        return (format!("tool result for {}", short(name, 40)), response, 1);
    }
    if part.get("inlineData").is_some() || part.get("fileData").is_some() {
        return ("file".into(), None, 9);
    }
    ("part".into(), None, 9)
}

/// `tool result for Bash (toolu_01…)`: the call it answers by name where an earlier message
/// made it, and by id.
fn result_kind(block: &Value, earlier: &[&Value]) -> String {
    let id = ["tool_use_id", "call_id", "tool_call_id"]
        .iter()
        .find_map(|key| block.get(*key).and_then(Value::as_str));
    let named = block
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| id.and_then(|id| call_name(earlier, id)));
    let error = block.get("is_error").and_then(Value::as_bool) == Some(true);
    let what = if error { "tool error" } else { "tool result" };
    match (named, id) {
        (Some(name), Some(id)) => format!("{what} for {} ({})", short(&name, 40), short_id(id)),
        (Some(name), None) => format!("{what} for {}", short(&name, 40)),
        (None, Some(id)) => format!("{what} for call {}", short_id(id)),
        (None, None) => what.to_string(),
    }
}

/// The name of the tool call with this id among `messages`, latest first.
fn call_name(messages: &[&Value], id: &str) -> Option<String> {
    let name_of = |block: &Value| {
        let same = ["id", "call_id"]
            .iter()
            .any(|key| block.get(*key).and_then(Value::as_str) == Some(id));
        same.then(|| {
            (block
                .get("name")
                .or_else(|| block.pointer("/function/name")))
            .and_then(Value::as_str)
            .map(str::to_string)
        })
        .flatten()
    };
    messages.iter().rev().find_map(|message| {
        name_of(message).or_else(|| {
            let content = message.get("content").and_then(Value::as_array);
            let calls = message.get("tool_calls").and_then(Value::as_array);
            (content.into_iter().flatten())
                .chain(calls.into_iter().flatten())
                .find_map(name_of)
        })
    })
}

/// A Responses reasoning item's summary text, when it gave one.
fn reasoning_summary(item: &Value) -> Option<String> {
    let parts = item.get("summary")?.as_array()?;
    let text: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    (!text.is_empty()).then(|| text.join(" "))
}

/// A tool result's words: a string, or the text of its blocks, or its JSON.
fn content_words(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            if texts.is_empty() {
                content.to_string()
            } else {
                texts.join(" ")
            }
        }
        other => json_words(other),
    }
}

/// A JSON value's words: a string as it is (chat's arguments are a JSON string), else compact
/// JSON.
fn json_words(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn quoted(text: &str) -> String {
    let mut words = shorten(text, FIRST_WORDS);
    if let Some(cut) = words.strip_suffix('…') {
        words = format!("{}…", cut.trim_end());
    }
    if text.trim_start().starts_with(['{', '[']) {
        words
    } else {
        format!("\"{words}\"")
    }
}

fn short(text: &str, most: usize) -> String {
    shorten(text, most)
}

fn short_id(id: &str) -> String {
    shorten(id, ID_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn notes(messages: &[Value]) -> Vec<String> {
        let messages: Vec<&Value> = messages.iter().collect();
        (0..messages.len())
            .map(|i| message_note(&messages, i))
            .collect()
    }

    #[test]
    fn anthropic_messages_name_their_role_kinds_and_first_words() {
        let messages = [
            json!({"role": "user", "content": "buy   milk\nand eggs"}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "The user wants a list."},
                {"type": "text", "text": "I'll add it."},
                {"type": "tool_use", "id": "toolu_01ABCDEFGHIJKLMNOP", "name": "add_item",
                 "input": {"item": "milk"}}]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01ABCDEFGHIJKLMNOP",
                 "content": [{"type": "text", "text": "Added\u{1b}[2J milk"}]},
                {"type": "image", "source": {"type": "base64", "data": "AAAA"}}]}),
        ];
        assert_eq!(
            notes(&messages),
            [
                "user, text: \"buy milk and eggs\"",
                "assistant, thinking + text + tool call add_item: \"I'll add it.\"",
                "user, tool result for add_item (toolu_01ABCDEFG…) + image: \"Added\\x1b[2J milk\"",
            ]
        );
    }

    #[test]
    fn chat_responses_and_gemini_messages_are_read_too() {
        let chat = [
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "hello"}),
        ];
        assert_eq!(
            notes(&chat),
            [
                "assistant, tool call read: {\"path\":\"a.txt\"}",
                "tool, tool result for read (call_1): \"hello\""
            ]
        );
        let responses = [
            json!({"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "list files"}]}),
            json!({"type": "function_call", "call_id": "c9", "name": "shell",
                   "arguments": "{\"cmd\":\"ls\"}"}),
            json!({"type": "function_call_output", "call_id": "c9", "output": "a.txt"}),
        ];
        assert_eq!(
            notes(&responses),
            [
                "user, text: \"list files\"",
                "assistant, tool call shell: {\"cmd\":\"ls\"}",
                "tool, tool result for shell (c9): \"a.txt\""
            ]
        );
        let gemini = [json!({"role": "model", "parts": [
            {"text": "pondering", "thought": true},
            {"functionCall": {"name": "grep", "args": {"q": "x"}}}]})];
        assert_eq!(
            notes(&gemini),
            ["model, thinking + tool call grep: {\"q\":\"x\"}"]
        );
    }

    #[test]
    fn long_words_are_cut() {
        let long = "word ".repeat(40);
        let note = message_note(&[&json!({"role": "user", "content": long})], 0);
        assert!(note.chars().count() < 80, "{note}");
        assert!(note.ends_with("…\""), "{note}");
    }
}
