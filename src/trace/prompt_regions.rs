//! The regions of a model request's prompt in the order a prompt cache's prefix covers them
//! (the tool set, the system blocks, the messages), read from the raw JSON body, and the first
//! one that differs between two requests, cache marks aside.

use serde_json::Value;

/// The first region of a prompt that changed from one request to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangedRegion {
    /// The tool definitions: which were added, removed or changed (by name).
    ToolSet {
        added: Vec<String>,
        removed: Vec<String>,
        changed: Vec<String>,
    },
    /// System block N (1-based).
    SystemBlock(usize),
    /// Message N (1-based) of the conversation was edited or removed.
    Message(usize),
}

impl ChangedRegion {
    pub fn text(&self) -> String {
        match self {
            ChangedRegion::ToolSet {
                added,
                removed,
                changed,
            } => {
                let mut parts = Vec::new();
                for (names, what) in [(added, "added"), (removed, "removed"), (changed, "changed")]
                {
                    if !names.is_empty() {
                        parts.push(format!("{what} {}", names.join(", ")));
                    }
                }
                if parts.is_empty() {
                    "the tool set (reordered)".to_string()
                } else {
                    format!("the tool set ({})", parts.join("; "))
                }
            }
            ChangedRegion::SystemBlock(n) => format!("system block {n}"),
            ChangedRegion::Message(n) => format!("message {n}"),
        }
    }
}

/// A request body's prompt regions, cache marks taken out.
pub struct PromptRegions {
    pub tools: Vec<Value>,
    pub system: Vec<Value>,
    pub messages: Vec<Value>,
}

impl PromptRegions {
    /// Reads the regions of any of the APIs' bodies: `tools`; `system` (Anthropic),
    /// `instructions` (Responses), `systemInstruction.parts` (Gemini); `messages`, `input`,
    /// `contents`.
    pub fn of(body: &Value) -> PromptRegions {
        let array = |v: Option<&Value>| match v {
            Some(Value::Array(items)) => items.iter().map(unmarked).collect(),
            Some(Value::Null) | None => Vec::new(),
            Some(other) => vec![unmarked(other)],
        };
        let system_value = body
            .get("system")
            .or_else(|| body.get("instructions"))
            .or_else(|| body.get("systemInstruction").and_then(|s| s.get("parts")));
        let messages_value = body
            .get("messages")
            .or_else(|| body.get("input"))
            .or_else(|| body.get("contents"));
        PromptRegions {
            tools: array(body.get("tools")),
            system: array(system_value),
            messages: array(messages_value),
        }
    }

    /// The first region of `self` (the later request) that differs from `earlier`: None when
    /// the later one carries the earlier prompt unchanged at its start.
    pub fn first_change(&self, earlier: &PromptRegions) -> Option<ChangedRegion> {
        if self.tools != earlier.tools {
            let names = |tools: &[Value]| -> Vec<(String, Value)> {
                tools
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        (
                            tool_name(t).unwrap_or_else(|| format!("#{}", i + 1)),
                            t.clone(),
                        )
                    })
                    .collect()
            };
            let (before, after) = (names(&earlier.tools), names(&self.tools));
            let find = |list: &[(String, Value)], name: &str| {
                list.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
            };
            let added = after
                .iter()
                .filter(|(n, _)| find(&before, n).is_none())
                .map(|(n, _)| n.clone())
                .collect();
            let removed = before
                .iter()
                .filter(|(n, _)| find(&after, n).is_none())
                .map(|(n, _)| n.clone())
                .collect();
            let changed = after
                .iter()
                .filter(|(n, v)| find(&before, n).is_some_and(|old| &old != v))
                .map(|(n, _)| n.clone())
                .collect();
            return Some(ChangedRegion::ToolSet {
                added,
                removed,
                changed,
            });
        }
        if let Some(n) = first_difference(&earlier.system, &self.system) {
            return Some(ChangedRegion::SystemBlock(n + 1));
        }
        first_difference(&earlier.messages, &self.messages).map(|n| ChangedRegion::Message(n + 1))
    }
}

/// The index of the first item of `earlier` that `later` does not repeat at the same place
/// (`later` may go on beyond it).
fn first_difference(earlier: &[Value], later: &[Value]) -> Option<usize> {
    earlier
        .iter()
        .enumerate()
        .find(|(i, item)| later.get(*i) != Some(item))
        .map(|(i, _)| i)
}

/// A tool's name: `name` (Anthropic, Responses), `function.name` (chat), the names of Gemini's
/// `functionDeclarations`.
pub fn tool_name(tool: &Value) -> Option<String> {
    if let Some(name) = tool.get("name").and_then(Value::as_str) {
        return Some(name.to_string());
    }
    if let Some(name) = tool.pointer("/function/name").and_then(Value::as_str) {
        return Some(name.to_string());
    }
    let declarations = tool.get("functionDeclarations")?.as_array()?;
    let names: Vec<&str> = declarations
        .iter()
        .filter_map(|d| d.get("name").and_then(Value::as_str))
        .collect();
    (!names.is_empty()).then(|| names.join("+"))
}

/// A value without its `cache_control` marks: a mark that moves is not a change of prompt.
pub fn unmarked(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), unmarked(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

/// The cache lifetimes a request asks for with its marks, in seconds (`ttl: "1h"` is 3,600; a
/// mark without a ttl, or `"5m"`, 300), shortest first; empty when it has no mark.
pub fn asked_ttls(body: &Value) -> Vec<u64> {
    let mut found = Vec::new();
    collect_ttls(body, &mut found);
    found.sort_unstable();
    found.dedup();
    found
}

fn collect_ttls(value: &Value, found: &mut Vec<u64>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if key == "cache_control" {
                    let ttl = inner.get("ttl").and_then(Value::as_str);
                    found.push(match ttl {
                        Some("1h") => 3600,
                        _ => 300,
                    });
                } else {
                    collect_ttls(inner, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_ttls(v, found)),
        _ => {}
    }
}
