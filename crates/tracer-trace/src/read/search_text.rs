//! What "a body holds this text" means for `tracer search` (and the TUI's `body:`, and `tracer
//! mcp`'s `search`): any case, non-ASCII letters included; in JSON (whole, NDJSON, SSE `data:`
//! lines) also by what its strings spell once their escapes are undone; in a stream, also by the
//! text its events spell together (a model's answer arrives a few letters per event).

use serde_json::Value;

/// Characters of an excerpt before and after the match.
const BEFORE: usize = 30;
const AFTER: usize = 50;

/// The keys whose string values a stream's events add up to: Anthropic `text`,
/// `partial_json`, `thinking`; OpenAI `content`, `arguments`; Responses `delta`; Ollama
/// `content`, `response`; Gemini `text`.
const STREAMED_KEYS: [&str; 8] = [
    "text",
    "partial_json",
    "thinking",
    "content",
    "arguments",
    "delta",
    "response",
    "output_text",
];

/// A searched text, folded once.
#[derive(Debug, Clone)]
pub struct SearchText {
    folded: String,
}

impl SearchText {
    pub fn new(text: &str) -> SearchText {
        SearchText {
            folded: fold(text.trim()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.folded.is_empty()
    }

    /// Bytes to keep at each end of a piece of a body so that a match across two pieces is
    /// found in the two ends joined (room for every character written as a `\u` escape).
    pub fn edge_len(&self) -> usize {
        self.folded.len() * 6 + 8
    }

    /// Where `bytes` hold the text (as written, or as their JSON escapes spell it): an excerpt
    /// around the first match, on one line.
    pub fn find(&self, bytes: &[u8]) -> Option<String> {
        if self.folded.is_empty() {
            return None;
        }
        let text = String::from_utf8_lossy(bytes);
        if let Some(excerpt) = self.find_in(&text) {
            return Some(excerpt);
        }
        if !text.contains('\\') {
            return None;
        }
        self.find_in(&unescaped(&text))
    }

    /// The match in a stream's text spelled by its events together (`streamed_text`).
    pub fn find_streamed(&self, bytes: &[u8]) -> Option<String> {
        let text = streamed_text(bytes)?;
        self.find_in(&text)
    }

    /// Whether a plain text (a title) holds the text.
    pub fn in_text(&self, text: &str) -> bool {
        !self.folded.is_empty() && fold(text).contains(&self.folded)
    }

    fn find_in(&self, text: &str) -> Option<String> {
        let folded = fold(text);
        let at = folded.find(&self.folded)?;
        let end = at + self.folded.len();
        // Folding kept the lengths (nearly always): the excerpt is of the text as written.
        let source = if folded.len() == text.len()
            && text.is_char_boundary(at)
            && text.is_char_boundary(end)
        {
            text
        } else {
            folded.as_str()
        };
        Some(excerpt(source, at, end))
    }
}

/// `…words before MATCH words after…` on one line.
fn excerpt(text: &str, at: usize, end: usize) -> String {
    let before: String = {
        let chars: Vec<char> = text[..at].chars().rev().take(BEFORE + 1).collect();
        let cut = chars.len() > BEFORE;
        let mut kept: String = chars
            .into_iter()
            .take(BEFORE)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if cut {
            kept.insert(0, '…');
        }
        kept
    };
    let mut after: String = text[end..].chars().take(AFTER).collect();
    if text[end..].chars().nth(AFTER).is_some() {
        after.push('…');
    }
    let joined = format!("{before}{}{after}", &text[at..end]);
    joined.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Case folded the Unicode way (`É` and `é` alike), not only ASCII.
fn fold(text: &str) -> String {
    text.to_lowercase()
}

/// The text with JSON string escapes undone (`\u00e9` → `é`, `\n` → a line end, `\"` → `"`),
/// read as text: no parse, so a body cut anywhere (a chunk, a truncated capture) reads too.
pub(crate) fn unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b' | 'f') => out.push(' '),
            Some(c @ ('"' | '\\' | '/')) => out.push(c),
            Some('u') => {
                chars.next();
                let mut ahead = chars.clone();
                let Some(code) = hex4(&mut ahead) else {
                    out.push_str("\\u");
                    continue;
                };
                chars = ahead;
                if (0xD800..=0xDBFF).contains(&code) {
                    let mut low_ahead = chars.clone();
                    let low = (low_ahead.next() == Some('\\') && low_ahead.next() == Some('u'))
                        .then(|| hex4(&mut low_ahead))
                        .flatten()
                        .filter(|low| (0xDC00..=0xDFFF).contains(low));
                    if let Some(low) = low {
                        chars = low_ahead;
                        let code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                        out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                    } else {
                        out.push('\u{FFFD}');
                    }
                } else {
                    out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                }
                continue;
            }
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    out
}

fn hex4(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<u32> {
    let mut code = 0;
    for _ in 0..4 {
        let digit = chars.peek()?.to_digit(16)?;
        chars.next();
        code = code * 16 + digit;
    }
    Some(code)
}

/// Whether a body with these headers is a stream of events or lines (SSE, NDJSON).
pub fn is_stream(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        t.contains("event-stream") || t.contains("ndjson") || t.contains("jsonl")
    })
}

/// The text a stream's events spell together: the string values of their text-bearing keys
/// (`STREAMED_KEYS`), in order, joined; None when no line of it is JSON.
pub(crate) fn streamed_text(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let mut out = String::new();
    let mut any = false;
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("data:").unwrap_or(line).trim_start();
        if !line.starts_with(['{', '[']) {
            continue;
        }
        if let Ok(value) = serde_json::from_str::<Value>(line) {
            any = true;
            collect(&value, &mut out);
        }
    }
    any.then_some(out)
}

fn collect(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
        Value::Object(map) => {
            for (key, item) in map {
                match item {
                    Value::String(text) if STREAMED_KEYS.contains(&key.as_str()) => {
                        out.push_str(text)
                    }
                    _ => collect(item, out),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_capitals_match_in_any_case() {
        let needle = SearchText::new("CAFÉ");
        assert_eq!(
            needle.find("un café noir".as_bytes()).as_deref(),
            Some("un café noir")
        );
        assert!(
            SearchText::new("straße")
                .find("STRASSE und Straße".as_bytes())
                .is_some()
        );
        assert!(
            SearchText::new("thé")
                .find("un café noir".as_bytes())
                .is_none()
        );
        assert!(SearchText::new("  ").find(b"anything").is_none());
    }

    #[test]
    fn escaped_json_text_matches_what_it_spells() {
        let body =
            br#"{"content":"caf\u00e9 au lait","tags":["\u00c9t\u00e9"],"e":"\ud83d\ude00 ok"}"#;
        assert!(SearchText::new("café au").find(body).is_some());
        assert!(SearchText::new("été").find(body).is_some());
        assert!(SearchText::new("\u{1F600} ok").find(body).is_some());
        let sse = b"event: message\ndata: {\"result\":\"\\u2713 done\"}\n\n";
        assert!(SearchText::new("\u{2713} done").find(sse).is_some());
        assert!(SearchText::new("absent").find(body).is_none());
        assert_eq!(unescaped(r#"a\"b\\n\u00"#), "a\"b\\n\\u00");
    }

    #[test]
    fn a_streamed_answer_matches_across_its_events() {
        let sse = concat!(
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"Appe\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"nded it\"}}\n\n",
        );
        let needle = SearchText::new("appended");
        assert!(needle.find(sse.as_bytes()).is_none());
        assert_eq!(
            needle.find_streamed(sse.as_bytes()).as_deref(),
            Some("Appended it")
        );
        let ndjson =
            b"{\"message\":{\"content\":\"Bu\"}}\n{\"message\":{\"content\":\"y milk\"}}\n";
        assert!(SearchText::new("BUY MILK").find_streamed(ndjson).is_some());
    }

    #[test]
    fn excerpts_are_one_short_line() {
        let long = format!("{}\nthe needle\n{}", "a ".repeat(100), "b ".repeat(100));
        let found = SearchText::new("NEEDLE").find(long.as_bytes()).unwrap();
        assert!(found.starts_with('…') && found.ends_with('…'), "{found}");
        assert!(found.contains("the needle b"), "{found}");
        assert!(found.chars().count() <= BEFORE + AFTER + 10, "{found}");
    }
}
