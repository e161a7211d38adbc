//! What "a body contains this text" means for the readers' search: any case, non-ASCII letters
//! included, and in a JSON body (whole, one per line, or SSE `data:` lines) by what its strings
//! spell once `\u` escapes are decoded.

use serde_json::Value;

/// A searched text, folded once.
#[derive(Debug, Clone)]
pub struct Needle {
    folded: String,
}

impl Needle {
    pub fn new(text: &str) -> Needle {
        Needle { folded: fold(text) }
    }

    /// Whether `body` holds the text: as written, or as its JSON strings read.
    pub fn found_in(&self, body: &[u8]) -> bool {
        if self.folded.is_empty() {
            return true;
        }
        let text = String::from_utf8_lossy(body);
        if fold(&text).contains(&self.folded) {
            return true;
        }
        if !text.contains("\\u") && !text.contains('\\') {
            return false;
        }
        let whole = serde_json::from_str::<Value>(&text).ok();
        whole
            .into_iter()
            .chain(text.lines().filter_map(json_line))
            .any(|value| self.in_strings(&value))
    }

    fn in_strings(&self, value: &Value) -> bool {
        match value {
            Value::String(text) => fold(text).contains(&self.folded),
            Value::Array(items) => items.iter().any(|item| self.in_strings(item)),
            Value::Object(map) => map
                .iter()
                .any(|(key, item)| fold(key).contains(&self.folded) || self.in_strings(item)),
            _ => false,
        }
    }
}

/// One NDJSON line or SSE `data:` line read as JSON.
fn json_line(line: &str) -> Option<Value> {
    let line = line.trim();
    let line = line.strip_prefix("data:").unwrap_or(line).trim_start();
    if !line.starts_with(['{', '[', '"']) {
        return None;
    }
    serde_json::from_str(line).ok()
}

/// Case folded the Unicode way (`É` and `é` alike), not only ASCII.
fn fold(text: &str) -> String {
    text.to_lowercase()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_capitals_match_in_any_case() {
        let needle = Needle::new("CAFÉ");
        assert!(needle.found_in("un café noir".as_bytes()));
        assert!(Needle::new("straße").found_in("STRASSE und Straße".as_bytes()));
        assert!(!Needle::new("thé").found_in("un café noir".as_bytes()));
    }

    #[test]
    fn escaped_json_text_matches_what_it_spells() {
        let body = br#"{"content":"caf\u00e9 au lait","tags":["\u00c9t\u00e9"]}"#;
        assert!(Needle::new("café au").found_in(body));
        assert!(Needle::new("été").found_in(body));
        let sse = b"event: message\ndata: {\"result\":\"\\u2713 done\"}\n\n";
        assert!(Needle::new("\u{2713} done").found_in(sse));
        let ndjson = b"{\"a\":\"x\"}\n{\"message\":{\"content\":\"na\\u00efve\"}}\n";
        assert!(Needle::new("NAÏVE").found_in(ndjson));
        assert!(!Needle::new("absent").found_in(body));
    }
}
