//! The regions of a model request's prompt in the order a prompt cache's prefix covers them
//! (the tool set, the system blocks, the messages), read from the raw JSON body, and the first
//! one that differs between two requests, cache marks aside.

use serde_json::Value;

/// The keys that hold the prompt's regions; every other top-level key is a parameter
/// (`metadata` is neither: it is never compared).
pub(crate) const REGION_KEYS: [&str; 8] = [
    "tools",
    "system",
    "instructions",
    "systemInstruction",
    "messages",
    "input",
    "contents",
    "metadata",
];

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
    pub(crate) fn text(&self) -> String {
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
pub(crate) struct PromptRegions {
    pub tools: Vec<Value>,
    pub system: Vec<Value>,
    pub messages: Vec<Value>,
}

impl PromptRegions {
    /// Reads the regions of any of the APIs' bodies: `tools`; `system` (Anthropic),
    /// `instructions` (Responses), `systemInstruction.parts` (Gemini); `messages`, `input`,
    /// `contents`.
    pub(crate) fn of(body: &Value) -> PromptRegions {
        let (tools, system, messages) = region_fields(body);
        let array = |v| items(v).into_iter().map(unmarked).collect();
        PromptRegions {
            tools: array(tools),
            system: array(system),
            messages: array(messages),
        }
    }

    /// The first region of `self` (the later request) that differs from `earlier`: None when
    /// the later one carries the earlier prompt unchanged at its start.
    /// The regions as digests: what comparing two prompts needs, without their contents.
    #[cfg(test)]
    pub(crate) fn digest(&self) -> RegionDigests {
        RegionDigests {
            tools: (self.tools.iter().enumerate())
                .map(|(i, t)| {
                    let name = tool_name(t).unwrap_or_else(|| format!("#{}", i + 1));
                    (name, value_digest(t))
                })
                .collect(),
            system: self.system.iter().map(value_digest).collect(),
            messages: self.messages.iter().map(value_digest).collect(),
        }
    }
}

/// A prompt's regions as digests of their JSON (cache marks out, equal exactly when the values
/// are): tools by name, system blocks and messages in order. Kept per request instead of its
/// body, so a long trace's cache verdicts do not hold every request.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct RegionDigests {
    pub tools: Vec<(String, u64)>,
    pub system: Vec<u64>,
    pub messages: Vec<u64>,
}

impl RegionDigests {
    /// The digests of a request body's regions, as `PromptRegions::of(body).digest()` gives
    /// them, without copying the regions first.
    pub(crate) fn of_body(body: &Value) -> RegionDigests {
        let (tools, system_value, messages_value) = region_fields(body);
        RegionDigests {
            tools: (items(tools).into_iter().enumerate())
                .map(|(i, t)| {
                    let name = tool_name(t).unwrap_or_else(|| format!("#{}", i + 1));
                    (name, value_digest(t))
                })
                .collect(),
            system: items(system_value).into_iter().map(value_digest).collect(),
            messages: items(messages_value)
                .into_iter()
                .map(value_digest)
                .collect(),
        }
    }

    /// The first region of this prompt that differs from `earlier`'s.
    pub(crate) fn first_change(&self, earlier: &RegionDigests) -> Option<ChangedRegion> {
        if self.tools != earlier.tools {
            let (before, after) = (&earlier.tools, &self.tools);
            let find = |list: &[(String, u64)], name: &str| {
                list.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
            };
            let names = |list: &[(String, u64)], keep: &dyn Fn(&str, u64) -> bool| {
                list.iter()
                    .filter(|(n, v)| keep(n, *v))
                    .map(|(n, _)| n.clone())
                    .collect()
            };
            return Some(ChangedRegion::ToolSet {
                added: names(after, &|n, _| find(before, n).is_none()),
                removed: names(before, &|n, _| find(after, n).is_none()),
                changed: names(after, &|n, v| find(before, n).is_some_and(|old| old != v)),
            });
        }
        if let Some(n) = first_difference(&earlier.system, &self.system) {
            return Some(ChangedRegion::SystemBlock(n + 1));
        }
        first_difference(&earlier.messages, &self.messages).map(|n| ChangedRegion::Message(n + 1))
    }
}

/// A body's region fields: its tools; `system` (Anthropic), `instructions` (Responses) or
/// `systemInstruction.parts` (Gemini); `messages`, `input` or `contents`.
fn region_fields(body: &Value) -> (Option<&Value>, Option<&Value>, Option<&Value>) {
    let system = body
        .get("system")
        .or_else(|| body.get("instructions"))
        .or_else(|| body.get("systemInstruction").and_then(|s| s.get("parts")));
    let messages = body
        .get("messages")
        .or_else(|| body.get("input"))
        .or_else(|| body.get("contents"));
    (body.get("tools"), system, messages)
}

/// A request body's messages (`messages`, `input`, `contents`), as [`PromptRegions`] has them.
pub(crate) fn message_items(body: &Value) -> Vec<&Value> {
    items(region_fields(body).2)
}

/// A digest of where a body's cache marks (`cache_control`) sit and what they say: equal for
/// two bodies whose marks are the same, wherever their other values differ.
pub(crate) fn marks_digest(body: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    /// A step into a value: a key's name or an item's place.
    #[derive(Hash)]
    enum Step<'a> {
        Key(&'a str),
        Item(usize),
    }
    fn walk<'a>(value: &'a Value, path: &mut Vec<Step<'a>>, hasher: &mut impl Hasher) {
        match value {
            Value::Object(map) => {
                if let Some(mark) = map.get("cache_control") {
                    (&*path, mark.to_string()).hash(hasher);
                }
                for (key, inner) in map.iter().filter(|(k, _)| k.as_str() != "cache_control") {
                    path.push(Step::Key(key));
                    walk(inner, path, hasher);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    path.push(Step::Item(i));
                    walk(inner, path, hasher);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    walk(body, &mut Vec::new(), &mut hasher);
    hasher.finish()
}

/// A region's items: an array's elements, or the one value.
fn items(value: Option<&Value>) -> Vec<&Value> {
    match value {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    }
}

/// A digest of a JSON value, cache marks (`cache_control`) aside, equal for equal values (an
/// object's keys in any order, as `Value`'s own equality has them with `preserve_order`).
pub(crate) fn value_digest(value: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    match value {
        Value::Null => 0u8.hash(&mut hasher),
        Value::Bool(b) => (1u8, b).hash(&mut hasher),
        Value::Number(n) => (2u8, n.to_string()).hash(&mut hasher),
        Value::String(s) => (3u8, s).hash(&mut hasher),
        Value::Array(items) => {
            4u8.hash(&mut hasher);
            items.iter().for_each(|v| value_digest(v).hash(&mut hasher));
        }
        Value::Object(map) => {
            // Keys in any order: the entries' digests combined by a sum.
            let mut sum = 0u64;
            let mut len = 0usize;
            for (key, inner) in map.iter().filter(|(k, _)| k.as_str() != "cache_control") {
                len += 1;
                let mut entry = std::collections::hash_map::DefaultHasher::new();
                (key, value_digest(inner)).hash(&mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
            (5u8, len, sum).hash(&mut hasher);
        }
    }
    hasher.finish()
}

fn first_difference<T: PartialEq>(earlier: &[T], later: &[T]) -> Option<usize> {
    earlier
        .iter()
        .enumerate()
        .find(|(i, item)| later.get(*i) != Some(item))
        .map(|(i, _)| i)
}

/// A tool's name: `name` (Anthropic, Responses), `function.name` (chat), the names of Gemini's
/// `functionDeclarations`.
pub(crate) fn tool_name(tool: &Value) -> Option<String> {
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
pub(crate) fn unmarked(value: &Value) -> Value {
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
pub(crate) fn asked_ttls(body: &Value) -> Vec<u64> {
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
