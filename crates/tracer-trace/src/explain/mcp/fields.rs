//! The quoted fields MCP explanations share: a message's params, a result's fields and names,
//! the request an answer answers (number and method), and an MCP case's words.

use serde_json::Value;

use crate::{explain::Case, explain::Explained, explain::McpCase, words::plural, words::shorten};
use tracer_wire::dialect::McpMessage;

/// How long a quoted text may be in a summary line.
pub(crate) const QUOTE: usize = 72;

pub(crate) fn param<'a>(message: &'a McpMessage, key: &str) -> Option<&'a Value> {
    message.params.as_ref().and_then(|p| p.get(key))
}

pub(crate) fn param_text(message: &McpMessage, key: &str) -> String {
    param(message, key)
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "?".into())
}

pub(crate) fn field_text(value: Option<&Value>, key: &str) -> String {
    value
        .and_then(|v| v.get(key))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "?".into())
}

pub(crate) fn mcp(case: McpCase, values: &[(&str, String)]) -> Explained {
    Explained::new(Case::Mcp(case), values)
}

pub(crate) fn names(
    items: Option<&Value>,
    keys: &[&str],
    one: &str,
) -> [(&'static str, String); 2] {
    let items = items.and_then(Value::as_array).cloned().unwrap_or_default();
    let listed: Vec<String> = items
        .iter()
        .filter_map(|item| {
            keys.iter()
                .find_map(|k| item.get(*k).and_then(Value::as_str))
        })
        .map(str::to_string)
        .collect();
    [
        ("count", plural(items.len(), one)),
        ("names", shorten(&listed.join(", "), QUOTE)),
    ]
}

pub(crate) fn status_message(value: Option<&Value>) -> String {
    value
        .and_then(|v| v.get("statusMessage"))
        .and_then(Value::as_str)
        .map_or_else(String::new, |m| format!(" (\"{}\")", shorten(m, 50)))
}
