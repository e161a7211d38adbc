//! Patterns of hosts that run tools without the model API's tool calling (open-webui's legacy
//! function calling): a tool-selection call, the tools described in the prompt and none offered,
//! then a call whose conversation the host rewrote, the tool output pasted in as context.

use serde_json::Value;

use crate::RecordedHop;
use tracer_wire::dialect::{HopReading, ModelRequest, Reading};

/// What a tool-selection prompt starts its tool list with (open-webui's default template).
const TOOLS_LIST_MARK: &str = "Available Tools:";

/// The tools a tool-selection call describes in its prompt, by name, when the request is one:
/// no tools offered in the API's own field, a system prompt listing them as JSON after
/// `Available Tools:` and asking for a `tool_calls` answer.
pub(crate) fn selection_tools(request: &ModelRequest) -> Option<Vec<String>> {
    if !request.tools.is_empty() {
        return None;
    }
    let system = system_text(request);
    let start = system.find(TOOLS_LIST_MARK)?;
    if !system.contains("tool_calls") {
        return None;
    }
    let rest = system[start + TOOLS_LIST_MARK.len()..].trim_start();
    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    let names = match stream.next() {
        Some(Ok(Value::Array(specs))) => specs
            .iter()
            .filter_map(|spec| spec.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    Some(names)
}

fn system_text(request: &ModelRequest) -> String {
    let mut text = request.system.as_deref().unwrap_or_default().to_string();
    for message in request.messages.iter().filter(|m| m.role == "system") {
        text.push('\n');
        text.push_str(&message.content);
    }
    text
}

/// One tool output the host pasted into a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pasted {
    /// The tool's output, as it ran.
    pub text: String,
    /// The label the host put on it (`<source name="server:phonebook/tool_get_phonenumber_post">`).
    pub label: Option<String>,
}

/// The tool outputs of a trace found pasted inside a request's user or system messages, when
/// the request carries no tool result of the API's own (no `role: tool` message, no tool call):
/// the host rewrote the conversation rather than extending it.
pub(crate) fn pasted_outputs(request: &ModelRequest, outputs: &[String]) -> Vec<Pasted> {
    let extends = request
        .messages
        .iter()
        .any(|m| m.role == "tool" || !m.tool_calls.is_empty());
    if extends {
        return Vec::new();
    }
    let mut found = Vec::new();
    for output in outputs.iter().filter(|o| o.trim().len() >= 3) {
        let output = output.trim();
        for message in request.messages.iter().filter(|m| m.role != "assistant") {
            if let Some(at) = message.content.find(output) {
                found.push(Pasted {
                    text: output.to_string(),
                    label: source_label(&message.content[..at]),
                });
                break;
            }
        }
    }
    found.dedup();
    found
}

/// The `name` of the `<source …>` tag the text before a pasted output ends in.
fn source_label(before: &str) -> Option<String> {
    let tag = &before[before.rfind("<source")?..];
    if tag.contains('<') && tag[1..].contains('<') {
        return None;
    }
    let name = &tag[tag.find("name=\"")? + 6..];
    Some(name[..name.find('"')?].to_string())
}

/// What a trace's tools answered, as text: each MCP `tools/call` result, and each JSON string
/// or text an OpenAPI tool server's route answered (mcpo's `"555-11111111"`).
pub(crate) fn tool_outputs(hops: &[RecordedHop], readings: &[HopReading]) -> Vec<String> {
    let mut outputs = Vec::new();
    for (hop, reading) in hops.iter().zip(readings) {
        let Some(response) = reading.response.as_ref() else {
            continue;
        };
        match &response.reading {
            Reading::Mcp(mcp) => {
                if let Some(text) = mcp.reply().and_then(|m| m.result_text.clone()) {
                    outputs.push(text);
                }
            }
            _ if hop.start.method == "POST" && hop.start.role == tracer_wire::hop::Role::Other => {
                let Some(end) = hop.end.as_ref() else {
                    continue;
                };
                if let Ok(Value::String(text)) = serde_json::from_slice(&end.response_body.bytes) {
                    outputs.push(text);
                }
            }
            _ => {}
        }
    }
    outputs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_label_is_the_name_of_the_tag_around_the_output() {
        assert_eq!(
            source_label("<context>\n<source id=\"1\" name=\"server:pb/tool_x_post\">"),
            Some("server:pb/tool_x_post".into())
        );
        assert_eq!(source_label("<source name=\"a\"></source> then <b>"), None);
        assert_eq!(source_label("no tag"), None);
    }
}
