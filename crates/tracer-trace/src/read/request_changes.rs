//! What changed from one model request of a conversation to the next, structurally: parameters
//! (model, max tokens, thinking, temperature, …), tool definitions, system blocks and messages
//! added, removed or edited (compaction shows as edited history), each message named by its
//! role, kind and first words (`message_notes`), with a character-level view of an edit.

use serde_json::Value;

use super::prompt_regions::{PromptRegions, REGION_KEYS, marks_digest, tool_name, unmarked};
use super::request_parts::{RequestParts, TAIL_NOTES};
use crate::read::message_notes::{message_about, message_note};

/// The line that says two requests differ only in where their cache marks sit.
pub(crate) const MARKS_ONLY: &str = "nothing changed but where the cache marks sit";

/// One change, as a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change(pub String);

/// The changes from `before` to `after` (two request bodies), in prompt order: parameters,
/// tools, system blocks, messages; [`MARKS_ONLY`] when nothing but the cache marks moved; empty
/// when the two are the same, marks and all (a resend).
pub fn request_changes(before: &Value, after: &Value) -> Vec<Change> {
    changes_between(
        (before, &PromptRegions::of(before)),
        (after, &PromptRegions::of(after)),
    )
}

/// [`request_changes`] of two bodies whose regions were taken already (a body compared with
/// the one before it and the one after it is taken apart once).
pub(crate) fn changes_between(
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
    out.extend(message_changes(&was.messages, &is.messages));
    if out.is_empty() && marks_digest(before) != marks_digest(after) {
        out.push(Change(MARKS_ONLY.to_string()));
    }
    out
}

/// [`request_changes`] from two requests' parts alone (their digests and the notes of their
/// last messages), when they are enough: None when a parameter, a tool, a system block or a
/// message differs in value (its words need both bodies), else the same lines the bodies give.
pub(crate) fn changes_by_digest(was: &RequestParts, is: &RequestParts) -> Option<Vec<Change>> {
    if was.parameters != is.parameters {
        return None;
    }
    let (was_regions, is_regions) = (&was.regions, &is.regions);
    let mut out = Vec::new();
    let find = |list: &[(String, u64)], name: &str| {
        list.iter()
            .find(|(n, _)| n == name)
            .map(|(_, digest)| *digest)
    };
    for (name, digest) in &is_regions.tools {
        match find(&was_regions.tools, name) {
            None => out.push(Change(format!("tool {name} added"))),
            Some(old) if old != *digest => return None,
            Some(_) => {}
        }
    }
    for (name, _) in &was_regions.tools {
        if find(&is_regions.tools, name).is_none() {
            out.push(Change(format!("tool {name} removed")));
        }
    }
    let (before, after) = (&was_regions.system, &is_regions.system);
    if before.iter().zip(after.iter()).any(|(a, b)| a != b) {
        return None;
    }
    out.extend(length_changes("system block", before.len(), after.len()));
    let (before, after) = (&was_regions.messages, &is_regions.messages);
    if before.iter().zip(after.iter()).any(|(a, b)| a != b) {
        return None;
    }
    // Messages added are the later request's last, removed ones the earlier's.
    let longer = if after.len() >= before.len() { is } else { was };
    let count = longer.regions.messages.len();
    let kept_from = count - longer.tail_notes.len().min(count);
    let note =
        |i: usize| (i.checked_sub(kept_from)).and_then(|at| longer.tail_notes.get(at).cloned());
    out.extend(message_ends(before.len(), after.len(), note)?);
    if out.is_empty() && was.marks != is.marks {
        out.push(Change(MARKS_ONLY.to_string()));
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

/// Items of a list (system blocks) edited in place, added at its end or removed.
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

/// Messages edited in place, added at the end or removed from it, each named by its role and
/// kind (and, added or removed, its first words).
fn message_changes(before: &[Value], after: &[Value]) -> Vec<Change> {
    let (was, is): (Vec<&Value>, Vec<&Value>) = (before.iter().collect(), after.iter().collect());
    let mut out = Vec::new();
    for (i, (old, new)) in before.iter().zip(after).enumerate() {
        if old != new {
            out.push(Change(format!(
                "message {} edited ({}): {}",
                i + 1,
                message_about(&is, i),
                char_view(&text_of(old), &text_of(new))
            )));
        }
    }
    let longer = if is.len() >= was.len() { &is } else { &was };
    let ends = message_ends(was.len(), is.len(), |i| Some(message_note(longer, i)));
    out.extend(ends.unwrap_or_default());
    out
}

/// The messages a list of `before` gained or lost at its end to become one of `after`, the
/// last [`TAIL_NOTES`] each on a line with its note (`note(i)`: message i's of the longer list,
/// None when not at hand), those before them as one range.
fn message_ends(
    before: usize,
    after: usize,
    note: impl Fn(usize) -> Option<String>,
) -> Option<Vec<Change>> {
    let (from, to, moved) = match after.cmp(&before) {
        std::cmp::Ordering::Greater => (before, after, "added"),
        std::cmp::Ordering::Less => (after, before, "removed"),
        std::cmp::Ordering::Equal => return Some(Vec::new()),
    };
    let named_from = from.max(to.saturating_sub(TAIL_NOTES));
    let mut out = Vec::with_capacity(to - named_from + 1);
    if named_from > from {
        out.push(range_line("message", from + 1, named_from, moved));
    }
    for i in named_from..to {
        out.push(Change(format!("message {} {moved}: {}", i + 1, note(i)?)));
    }
    Some(out)
}

/// The items a list of `before` items gained or lost at its end, as `after` has them.
fn length_changes(what: &str, before: usize, after: usize) -> Option<Change> {
    let (from, to, moved) = match after.cmp(&before) {
        std::cmp::Ordering::Greater => (before + 1, after, "added"),
        std::cmp::Ordering::Less => (after + 1, before, "removed"),
        std::cmp::Ordering::Equal => return None,
    };
    Some(range_line(what, from, to, moved))
}

/// `message 3 added`, `messages 3-4 added` (1-based, `to` included).
fn range_line(what: &str, from: usize, to: usize, moved: &str) -> Change {
    Change(if from == to {
        format!("{what} {from} {moved}")
    } else {
        format!("{what}s {from}-{to} {moved}")
    })
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
pub(crate) fn char_view(before: &str, after: &str) -> String {
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

/// What Claude Code's second request of the buy-milk turn adds, line by line.
#[cfg(test)]
pub(crate) const CLAUDE_CODES_SECOND_REQUEST: [&str; 2] = [
    "message 3 added: assistant, thinking + text + tool call mcp__notes__append: \"I'll add that to your notes.\"",
    "message 4 added: user, tool result for mcp__notes__append (toolu_01Scripte…): \"Appended a new line at the end of the notes (now 1 line, 9…\"",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TURN1: &str =
        include_str!("../../../../tests/fixtures/agents/claude-code/turn1_request.json");
    const TURN2: &str =
        include_str!("../../../../tests/fixtures/agents/claude-code/turn2_request.json");

    fn texts(changes: &[Change]) -> Vec<&str> {
        changes.iter().map(|c| c.0.as_str()).collect()
    }

    #[test]
    fn claude_codes_second_request_adds_two_messages_and_nothing_else() {
        let (a, b): (Value, Value) = (
            serde_json::from_str(TURN1).unwrap(),
            serde_json::from_str(TURN2).unwrap(),
        );
        assert_eq!(texts(&request_changes(&a, &b)), CLAUDE_CODES_SECOND_REQUEST);
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
        assert!(
            lines.contains(&"message 2 removed: system, text: \"Available agent types for the Agent tool: - claude: Catch-a…\""),
            "{lines:?}"
        );
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
