//! Filling a request's anatomy as the readers see it: system parts, tool definitions with their
//! sizes, `cache_control` marks.

use serde_json::Value;

use super::json_util::str_field;
use super::{ModelMessage, SystemPart, SystemSource, ToolDef};

/// Bytes of a JSON value written compactly (close to what was sent; the wire's own spacing is not
/// kept by the parser).
pub(super) fn json_bytes(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |text| text.len())
}

/// Whether a JSON object carries a `cache_control` mark.
pub(super) fn cache_marked(value: &Value) -> bool {
    value
        .get("cache_control")
        .is_some_and(|mark| !mark.is_null())
}

/// One definition per entry of a flat `tools` array (`{name}` or `{function: {name}}`), in order.
pub(super) fn flat_tool_defs(tools: Option<&Value>) -> Vec<ToolDef> {
    let Some(Value::Array(tools)) = tools else {
        return Vec::new();
    };
    tools
        .iter()
        .filter_map(|tool| {
            let name = str_field(tool, "name")
                .or_else(|| tool.get("function").and_then(|f| str_field(f, "name")))?;
            Some(ToolDef {
                name: name.to_string(),
                namespace: None,
                bytes: json_bytes(tool),
            })
        })
        .collect()
}

/// The system and developer messages of a conversation, each a part of the system prompt.
pub(super) fn message_system_parts(messages: &[ModelMessage]) -> Vec<SystemPart> {
    messages
        .iter()
        .filter(|m| m.role == "system" || m.role == "developer")
        .map(|m| SystemPart {
            source: SystemSource::Message(m.role.clone()),
            bytes: m.content.len(),
            cache_marked: false,
        })
        .collect()
}

/// The parts of a `system`-like field: a string is one part, an array one part per block.
pub(super) fn field_parts(value: Option<&Value>, source: SystemSource) -> Vec<SystemPart> {
    match value {
        Some(Value::String(text)) if !text.is_empty() => vec![SystemPart {
            source,
            bytes: text.len(),
            cache_marked: false,
        }],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|block| SystemPart {
                source: source.clone(),
                bytes: match block {
                    Value::String(text) => text.len(),
                    other => str_field(other, "text").map_or_else(|| json_bytes(other), str::len),
                },
                cache_marked: cache_marked(block),
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_and_tools_are_measured() {
        let parts = field_parts(
            Some(
                &json!(["ab", {"type": "text", "text": "cde", "cache_control": {"type": "ephemeral"}}]),
            ),
            SystemSource::SystemField,
        );
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].bytes, parts[0].cache_marked), (2, false));
        assert_eq!((parts[1].bytes, parts[1].cache_marked), (3, true));
        let tools = flat_tool_defs(Some(
            &json!([{"name": "a"}, {"function": {"name": "b"}}, {}]),
        ));
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(tools[0].bytes, "{\"name\":\"a\"}".len());
    }
}
