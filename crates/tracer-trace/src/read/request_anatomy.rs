//! What one model request carries: its system prompt (blocks, messages, bytes), the tools it
//! offers by origin, its messages and what is new since the previous request of the same
//! conversation, plus the user's own words however long the body.

use super::tool_origin::{ToolCount, ToolOrigins};
use tracer_wire::dialect::{ModelMessage, ModelRequest, SystemPart, SystemSource, ToolDef};

/// A model request, measured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestAnatomy {
    /// Parts from a system field (`system` blocks, `instructions`, `systemInstruction` parts).
    pub system_blocks: usize,
    /// System and developer messages inside the conversation.
    pub system_messages: usize,
    pub system_bytes: usize,
    pub tools: ToolCount,
    pub tool_bytes: usize,
    /// Messages of the conversation, system and developer messages not counted.
    pub messages: usize,
    /// How many of them are new since the previous request of the same conversation; None for
    /// the first request of a conversation.
    pub new_messages: Option<usize>,
    pub cache_marks: usize,
    pub thinking_mode: Option<String>,
    pub body_bytes: usize,
}

fn is_system(message: &ModelMessage) -> bool {
    message.role == "system" || message.role == "developer"
}

impl RequestAnatomy {
    /// Measures `request`; `previous` is the previous request of the same conversation.
    pub(crate) fn of(
        request: &ModelRequest,
        previous: Option<&ModelRequest>,
        origins: &ToolOrigins,
    ) -> Self {
        let parts = &request.system_parts;
        let in_messages = |p: &&SystemPart| matches!(p.source, SystemSource::Message(_));
        let conversation = |r: &ModelRequest| r.messages.iter().filter(|m| !is_system(m)).count();
        let messages = conversation(request);
        // A reader that names the tools without measuring them still says how many there are.
        let named: Vec<ToolDef>;
        let defs = if request.tool_defs.is_empty() {
            named = request
                .tools
                .iter()
                .map(|name| ToolDef {
                    name: name.clone(),
                    ..ToolDef::default()
                })
                .collect();
            &named
        } else {
            &request.tool_defs
        };
        Self {
            system_blocks: parts.iter().filter(|p| !in_messages(p)).count(),
            system_messages: parts.iter().filter(in_messages).count(),
            system_bytes: parts.iter().map(|p| p.bytes).sum(),
            tools: origins.count(defs),
            tool_bytes: defs.iter().map(|t| t.bytes).sum(),
            messages,
            new_messages: previous.map(|p| messages.saturating_sub(conversation(p))),
            cache_marks: request.cache_marks,
            thinking_mode: request.thinking_mode.clone(),
            body_bytes: request.body_bytes,
        }
    }

    /// `system 3 blocks + 1 message, 12.2 KB`, or None when there is no system prompt.
    pub(crate) fn system_text(&self) -> Option<String> {
        let mut pieces = Vec::new();
        if self.system_blocks > 0 {
            pieces.push(plural(self.system_blocks, "block"));
        }
        if self.system_messages > 0 {
            pieces.push(plural(self.system_messages, "message"));
        }
        (!pieces.is_empty())
            .then(|| format!("{}, {}", pieces.join(" + "), human_bytes(self.system_bytes)))
    }

    /// `29: 24 the host's, 5 from notes (mcp)`, or `3: all the host's`.
    pub(crate) fn tools_text(&self) -> String {
        let count = &self.tools;
        if count.servers.is_empty() {
            return format!("{}: all the host's", count.total);
        }
        let mut pieces = Vec::new();
        if count.host > 0 {
            pieces.push(format!("{} the host's", count.host));
        }
        for (server, n) in &count.servers {
            pieces.push(format!("{n} from {server} (mcp)"));
        }
        format!("{}: {}", count.total, pieces.join(", "))
    }

    /// `2 messages, 1 new`.
    pub fn messages_text(&self) -> String {
        let mut text = plural(self.messages, "message");
        if let Some(new) = self.new_messages {
            text.push_str(&format!(", {new} new"));
        }
        text
    }

    /// The one line `tracer show` prints under a model request:
    /// `system 3 blocks + 1 message, 12.3 KB · tools 29 (64.8 KB): 24 the host's, 5 from notes
    /// (mcp) · 2 messages, 1 new`.
    pub fn line(&self) -> String {
        let mut pieces = Vec::new();
        if let Some(system) = self.system_text() {
            pieces.push(format!("system {system}"));
        }
        if self.tools.total > 0 {
            let mut tools = format!("tools {}", self.tools.total);
            if self.tool_bytes > 0 {
                tools.push_str(&format!(" ({})", human_bytes(self.tool_bytes)));
            }
            if let Some((_, origins)) = self.tools_text().split_once(": ") {
                tools.push_str(&format!(": {origins}"));
            }
            pieces.push(tools);
        }
        pieces.push(self.messages_text());
        if self.cache_marks > 0 {
            pieces.push(plural(self.cache_marks, "cache mark"));
        }
        if let Some(mode) = &self.thinking_mode {
            pieces.push(format!("thinking: {mode}"));
        }
        pieces.join(" · ")
    }
}

/// Whether `earlier` is an earlier request of the conversation `later` continues: its first
/// message of the conversation is the same and it has no more messages.
pub(crate) fn same_conversation(earlier: &ModelRequest, later: &ModelRequest) -> bool {
    let first = |r: &ModelRequest| {
        r.messages
            .iter()
            .find(|m| !is_system(m))
            .map(|m| (m.role.clone(), m.content.clone()))
    };
    let count = |r: &ModelRequest| r.messages.iter().filter(|m| !is_system(m)).count();
    first(earlier).is_some() && first(earlier) == first(later) && count(earlier) <= count(later)
}

/// The latest of `earlier` requests (in order) that `request` continues the conversation of.
pub(crate) fn previous_of<'a>(
    request: &ModelRequest,
    earlier: &[&'a ModelRequest],
) -> Option<&'a ModelRequest> {
    earlier
        .iter()
        .rev()
        .find(|e| same_conversation(e, request))
        .copied()
}

/// The user's own words in a request: the latest user message's text without the blocks a host
/// wraps in tags of its own (`<system-reminder>…</system-reminder>`, `<environment_context>…`),
/// skipping user messages that are only such blocks.
pub(crate) fn user_words(request: &ModelRequest) -> Option<String> {
    request
        .messages
        .iter()
        .rev()
        .filter(|m| m.role == "user")
        .map(|m| without_tagged_blocks(&m.content))
        .find(|text| !text.is_empty() && !is_injected_instructions(text))
}

/// The user's words as a title: [`user_words`] on one line (line breaks and runs of spaces
/// become one space), without the quotes a host wraps them in (opencode's `"…"`).
pub(crate) fn title_words(request: &ModelRequest) -> Option<String> {
    Some(title_line(&user_words(request)?)).filter(|t| !t.is_empty())
}

/// The longest title kept, in characters: a title names a trace, it is not its message (a
/// pasted 28 MB file is no title).
pub(crate) const TITLE_CHARS: usize = 500;

/// A title or summary on one line: whitespace runs (line breaks too) become one space, a pair
/// of quotes around the whole is dropped, and it ends with `…` after [`TITLE_CHARS`].
pub fn title_line(text: &str) -> String {
    // Only the head can be kept: the rest of a long text is not read.
    let head = match text.char_indices().nth(TITLE_CHARS * 8) {
        Some((at, _)) => &text[..at],
        None => text,
    };
    let mut line = head.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > TITLE_CHARS || head.len() < text.len() {
        line = line.chars().take(TITLE_CHARS - 1).collect();
        line.push('…');
        return line;
    }
    for (open, close) in [('"', '"'), ('\u{201c}', '\u{201d}'), ('\'', '\'')] {
        if let Some(inner) = line
            .strip_prefix(open)
            .and_then(|rest| rest.strip_suffix(close))
            && !inner.is_empty()
            && !inner.contains(open)
            && !inner.contains(close)
        {
            return inner.trim().to_string();
        }
    }
    line
}

/// Text a host injects as a user message of its own: project instructions (`AGENTS.md`,
/// `CLAUDE.md`) read from disk.
fn is_injected_instructions(text: &str) -> bool {
    let head = text.trim_start();
    [
        "# AGENTS.md",
        "# CLAUDE.md",
        "Contents of ",
        "# Project instructions",
    ]
    .iter()
    .any(|start| head.starts_with(start))
        && (head.contains("AGENTS.md") || head.contains("CLAUDE.md") || head.starts_with("# P"))
}

/// A text without its blocks wrapped in one XML-like tag (`<name>` at the start of a line, up
/// to the line that holds `</name>`).
fn without_tagged_blocks(text: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut closing: Option<String> = None;
    for line in text.lines() {
        if let Some(close) = &closing {
            if line.contains(close.as_str()) {
                closing = None;
            }
            continue;
        }
        match opening_tag(line.trim_start()) {
            Some(name) => {
                let close = format!("</{name}>");
                if !line.contains(&close) {
                    closing = Some(close);
                }
            }
            None => kept.push(line),
        }
    }
    if closing.is_some() {
        // An unclosed tag is text, not a block.
        return text.trim().to_string();
    }
    kept.join("\n").trim().to_string()
}

/// The name of the tag a text starts with (`<system-reminder>` → `system-reminder`).
fn opening_tag(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('<')?;
    let end = inner.find('>')?;
    let name = &inner[..end];
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    plain.then_some(name)
}

/// `1 block` / `3 blocks`.
fn plural(count: usize, one: &str) -> String {
    crate::words::plural(count, one)
}

/// `940 B`, `12.2 KB`, `1.4 MB` (powers of 1000).
pub fn human_bytes(bytes: usize) -> String {
    let bytes = bytes as f64;
    if bytes < 1000.0 {
        format!("{bytes} B")
    } else if bytes < 1e6 {
        format!("{:.1} KB", bytes / 1e3)
    } else {
        format!("{:.1} MB", bytes / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(role: &str, content: &str) -> std::sync::Arc<ModelMessage> {
        std::sync::Arc::new(ModelMessage {
            role: role.into(),
            content: content.into(),
            ..ModelMessage::default()
        })
    }

    #[test]
    fn the_users_words_are_found_behind_the_hosts_blocks() {
        let request = ModelRequest {
            messages: vec![
                message(
                    "user",
                    "<environment_context>\n<cwd>/x</cwd>\n</environment_context>",
                ),
                message(
                    "user",
                    "<system-reminder>\nsome context\n</system-reminder>\nAdd buy milk to my notes",
                ),
                message("system", "agent types"),
                message("tool", "done"),
                message("user", "<system-reminder>only this</system-reminder>"),
            ],
            ..ModelRequest::default()
        };
        assert_eq!(
            user_words(&request).as_deref(),
            Some("Add buy milk to my notes")
        );
        assert_eq!(without_tagged_blocks("a <b>c</b>"), "a <b>c</b>");
        assert_eq!(
            without_tagged_blocks("Do it\n<r>\nnote\n</r>\nnow"),
            "Do it\nnow"
        );
        assert_eq!(without_tagged_blocks("<x>unclosed"), "<x>unclosed");
    }

    #[test]
    fn titles_are_one_line_without_the_hosts_quotes() {
        assert_eq!(
            title_line("\"Add buy milk to my notes\""),
            "Add buy milk to my notes"
        );
        assert_eq!(
            title_line("context:\n# currentDate\nToday"),
            "context: # currentDate Today"
        );
        assert_eq!(title_line("\"a\" and \"b\""), "\"a\" and \"b\"");
        // A pasted file is cut: a title names the trace.
        let pasted = "x".repeat(3_000_000);
        let title = title_line(&pasted);
        assert_eq!(title.chars().count(), TITLE_CHARS);
        assert!(title.ends_with('…'));
        let words = "word ".repeat(200);
        assert_eq!(title_line(&words).chars().count(), TITLE_CHARS);
        let request = ModelRequest {
            messages: vec![
                message("user", "# AGENTS.md instructions for /x\n\nBe brief."),
                message(
                    "user",
                    "<system-reminder>\nctx\n</system-reminder>\n\"Add\nmilk\"",
                ),
            ],
            ..ModelRequest::default()
        };
        assert_eq!(title_words(&request).as_deref(), Some("Add milk"));
        let only_instructions = ModelRequest {
            messages: vec![message(
                "user",
                "# AGENTS.md instructions for /x\nBe brief.",
            )],
            ..ModelRequest::default()
        };
        assert_eq!(title_words(&only_instructions), None);
    }

    #[test]
    fn conversations_continue_and_sizes_read() {
        let first = ModelRequest {
            messages: vec![message("user", "hi"), message("system", "s")],
            ..ModelRequest::default()
        };
        let mut second = first.clone();
        second.messages.push(message("assistant", "hello"));
        let other = ModelRequest {
            messages: vec![message("user", "title this")],
            ..ModelRequest::default()
        };
        assert!(same_conversation(&first, &second));
        assert!(!same_conversation(&second, &first));
        assert!(!same_conversation(&other, &second));
        let anatomy = RequestAnatomy::of(&second, Some(&first), &ToolOrigins::default());
        assert_eq!(anatomy.messages_text(), "2 messages, 1 new");
        assert_eq!(human_bytes(940), "940 B");
        assert_eq!(human_bytes(12_192), "12.2 KB");
        assert_eq!(human_bytes(1_400_000), "1.4 MB");
    }
}
