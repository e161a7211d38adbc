//! What changed from one model request of a conversation to the next, structurally: parameters
//! (model, max tokens, thinking, temperature, …), tool definitions, system blocks and messages
//! added, removed or edited (compaction shows as edited history), with a character-level view.

use serde_json::Value;

use super::prompt_regions::{PromptRegions, REGION_KEYS, RegionDigests, tool_name, unmarked};

/// One change, as a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change(pub String);

/// The changes from `before` to `after` (two request bodies), in prompt order: parameters,
/// tools, system blocks, messages. Empty when nothing but the cache marks moved.
pub fn request_changes(before: &Value, after: &Value) -> Vec<Change> {
    changes_between(
        (before, &PromptRegions::of(before)),
        (after, &PromptRegions::of(after)),
    )
}

/// [`request_changes`] of two bodies whose regions were taken already (a body compared with
/// the one before it and the one after it is taken apart once).
pub fn changes_between(
    (before, was): (&Value, &PromptRegions),
    (after, is): (&Value, &PromptRegions),
) -> Vec<Change> {
    let mut out = Vec::new();
    let (Some(old), Some(new)) = (before.as_object(), after.as_object()) else {
        return out;
    };
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys
        .into_iter()
        .filter(|k| !REGION_KEYS.contains(&k.as_str()))
    {
        let (was, is) = (old.get(key).map(unmarked), new.get(key).map(unmarked));
        if was != is {
            out.push(Change(format!(
                "parameter {key}: {} → {}",
                shown(was.as_ref()),
                shown(is.as_ref())
            )));
        }
    }
    out.extend(tool_changes(&was.tools, &is.tools));
    out.extend(list_changes("system block", &was.system, &is.system));
    out.extend(list_changes("message", &was.messages, &is.messages));
    out
}

/// [`request_changes`] from two requests' digests alone, when they are enough: None when a
/// parameter, a tool, a system block or a message differs in value (its words need both
/// bodies), else the same lines the bodies give.
pub fn changes_by_digest(
    (was_parameters, was): (&[(String, u64)], &RegionDigests),
    (is_parameters, is): (&[(String, u64)], &RegionDigests),
) -> Option<Vec<Change>> {
    if was_parameters != is_parameters {
        return None;
    }
    let mut out = Vec::new();
    let find = |list: &[(String, u64)], name: &str| {
        list.iter()
            .find(|(n, _)| n == name)
            .map(|(_, digest)| *digest)
    };
    for (name, digest) in &is.tools {
        match find(&was.tools, name) {
            None => out.push(Change(format!("tool {name} added"))),
            Some(old) if old != *digest => return None,
            Some(_) => {}
        }
    }
    for (name, _) in &was.tools {
        if find(&is.tools, name).is_none() {
            out.push(Change(format!("tool {name} removed")));
        }
    }
    for (what, before, after) in [
        ("system block", &was.system, &is.system),
        ("message", &was.messages, &is.messages),
    ] {
        if before.iter().zip(after.iter()).any(|(a, b)| a != b) {
            return None;
        }
        out.extend(length_changes(what, before.len(), after.len()));
    }
    Some(out)
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "(none)".to_string(),
        Some(value) => shorten(&value.to_string(), 60),
    }
}

fn tool_changes(before: &[Value], after: &[Value]) -> Vec<Change> {
    let named = |tools: &[Value]| -> Vec<(String, Value)> {
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
    let (was, is) = (named(before), named(after));
    let find = |list: &[(String, Value)], name: &str| {
        list.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    };
    let mut out = Vec::new();
    for (name, value) in &is {
        match find(&was, name) {
            None => out.push(Change(format!("tool {name} added"))),
            Some(old) if &old != value => out.push(Change(format!(
                "tool {name} changed: {}",
                char_view(&old.to_string(), &value.to_string())
            ))),
            Some(_) => {}
        }
    }
    for (name, _) in &was {
        if find(&is, name).is_none() {
            out.push(Change(format!("tool {name} removed")));
        }
    }
    out
}

/// Items of a list (system blocks, messages) edited in place, added at its end or removed.
fn list_changes(what: &str, before: &[Value], after: &[Value]) -> Vec<Change> {
    let mut out = Vec::new();
    for (i, (was, is)) in before.iter().zip(after).enumerate() {
        if was != is {
            out.push(Change(format!(
                "{what} {} edited: {}",
                i + 1,
                char_view(&text_of(was), &text_of(is))
            )));
        }
    }
    out.extend(length_changes(what, before.len(), after.len()));
    out
}

/// The items a list of `before` items gained or lost at its end, as `after` has them.
fn length_changes(what: &str, before: usize, after: usize) -> Option<Change> {
    let (from, to, moved) = match after.cmp(&before) {
        std::cmp::Ordering::Greater => (before + 1, after, "added"),
        std::cmp::Ordering::Less => (after + 1, before, "removed"),
        std::cmp::Ordering::Equal => return None,
    };
    Some(Change(if from == to {
        format!("{what} {from} {moved}")
    } else {
        format!("{what}s {from}-{to} {moved}")
    }))
}

/// A block's or message's text where it is one (a string, `text`, `content`), else its JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        _ => match value.get("text").or_else(|| value.get("content")) {
            Some(Value::String(text)) => text.clone(),
            _ => value.to_string(),
        },
    }
}

/// The differing middle of two texts with a little context: `…same [-old-]{+new+} same…`.
pub fn char_view(before: &str, after: &str) -> String {
    let (a, b): (Vec<char>, Vec<char>) = (before.chars().collect(), after.chars().collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let most = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(most)
        .take_while(|(x, y)| x == y)
        .count();
    const CONTEXT: usize = 20;
    let start = prefix.saturating_sub(CONTEXT);
    let lead: String = a[start..prefix].iter().collect();
    let removed: String = a[prefix..a.len() - suffix].iter().collect();
    let added: String = b[prefix..b.len() - suffix].iter().collect();
    let tail_end = (a.len() - suffix + CONTEXT.min(suffix)).min(a.len());
    let tail: String = a[a.len() - suffix..tail_end].iter().collect();
    format!(
        "{}{lead}[-{}-]{{+{}+}}{tail}{}",
        if start > 0 { "…" } else { "" },
        shorten(&removed, 80),
        shorten(&added, 80),
        if tail_end < a.len() { "…" } else { "" }
    )
}

fn shorten(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_string();
    }
    let kept: String = text.chars().take(most).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TURN1: &str = include_str!("../../tests/fixtures/agents/claude-code/turn1_request.json");
    const TURN2: &str = include_str!("../../tests/fixtures/agents/claude-code/turn2_request.json");

    fn texts(changes: &[Change]) -> Vec<&str> {
        changes.iter().map(|c| c.0.as_str()).collect()
    }

    #[test]
    fn claude_codes_second_request_adds_two_messages_and_nothing_else() {
        let (a, b): (Value, Value) = (
            serde_json::from_str(TURN1).unwrap(),
            serde_json::from_str(TURN2).unwrap(),
        );
        assert_eq!(texts(&request_changes(&a, &b)), ["messages 3-4 added"]);
    }

    #[test]
    fn parameters_tools_system_and_edited_history_are_each_named() {
        let a: Value = serde_json::from_str(TURN1).unwrap();
        let mut b = a.clone();
        b["max_tokens"] = json!(1024);
        b["tools"].as_array_mut().unwrap().remove(0);
        b["system"][2]["text"] = json!(format!(
            "Be brief. {}",
            a["system"][2]["text"].as_str().unwrap()
        ));
        b["messages"].as_array_mut().unwrap().truncate(1);
        let changes = request_changes(&a, &b);
        let lines = texts(&changes);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("parameter max_tokens: ") && l.ends_with(" → 1024")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("tool ") && l.ends_with(" removed")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("system block 3 edited: ")
                    && l.contains("[--]{+Be brief. +}")),
            "{lines:?}"
        );
        assert!(lines.contains(&"message 2 removed"), "{lines:?}");
    }

    #[test]
    fn the_character_view_shows_the_middle_that_differs() {
        assert_eq!(
            char_view("buy milk", "buy oat milk"),
            "buy [--]{+oat +}milk"
        );
        assert_eq!(char_view("same", "same"), "same[--]{++}");
    }
}
