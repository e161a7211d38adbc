//! Recorded text made safe for a terminal: control and bidi characters shown as visible escapes.
//!
//! Everything tracer shows comes from programs it does not control. A raw ESC can write the
//! clipboard (OSC 52), retitle or clear the terminal, or plant links; a raw U+202E turns
//! `\u{202e}exe.txt` into `txt.exe` on screen. Every text face passes what it prints through
//! [`one_line`] (a field on one line), [`multi_line`] (a block that keeps its newlines and tabs)
//! or, for JSON on stdout, [`json_text`].

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as it is: C0 and C1 controls, DEL and the Unicode
/// bidirectional controls (embeddings, overrides, isolates, marks).
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// The Unicode bidirectional formatting characters: U+202A–U+202E, U+2066–U+2069, U+200E,
/// U+200F and U+061C.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// A field shown on one line: every unsafe character, newlines and tabs included, as an escape.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape_where(text, is_unsafe)
}

/// Text for one log line: runs of whitespace (newlines included) as one space, then
/// [`one_line`]. A multi-line error page or message from a peer stays one line.
pub fn log_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line(&joined).into_owned()
}

/// A block of lines: newlines and tabs kept, every other unsafe character (CR included) as an
/// escape.
pub fn multi_line(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && c != '\t' && is_unsafe(c))
}

/// JSON text as serde writes it, with DEL, the C1 controls and the bidi controls written as
/// `\uXXXX` too (serde escapes only C0). The value read back is the same: these characters only
/// ever appear inside JSON strings, where `\uXXXX` means the character itself.
pub fn json_text(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_unsafe) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c) && c != '\n' && c != '\t' && c != '\r' {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The visible form of one character: `\x1b` for ASCII controls, `\u{202e}` for the others.
fn escape_char(c: char) -> String {
    let code = u32::from(c);
    if code < 0x80 {
        format!("\\x{code:02x}")
    } else {
        format!("\\u{{{code:x}}}")
    }
}

fn escape_where(text: &str, unsafe_here: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&unsafe_here) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_here(c) {
            out.push_str(&escape_char(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\x1b]52;c;aGk=\x07b\x1b[2J\u{9b}1m\u{202e}exe.txt\r\nnext\tcol\x7f\u{2066}\u{200f}\u{61c}";

    fn raw_unsafe(text: &str, allowed: &[char]) -> Vec<char> {
        text.chars()
            .filter(|c| is_unsafe(*c) && !allowed.contains(c))
            .collect()
    }

    #[test]
    fn one_line_escapes_every_control_and_bidi_character() {
        let safe = one_line(HOSTILE);
        assert!(raw_unsafe(&safe, &[]).is_empty(), "{safe:?}");
        assert_eq!(
            safe,
            "a\\x1b]52;c;aGk=\\x07b\\x1b[2J\\u{9b}1m\\u{202e}exe.txt\\x0d\\x0anext\\x09col\\x7f\\u{2066}\\u{200f}\\u{61c}"
        );
    }

    #[test]
    fn multi_line_keeps_newlines_and_tabs_only() {
        let safe = multi_line(HOSTILE);
        assert!(raw_unsafe(&safe, &['\n', '\t']).is_empty(), "{safe:?}");
        assert!(safe.contains("\\x0d\nnext\tcol"), "{safe:?}");
    }

    #[test]
    fn log_line_joins_lines_and_escapes_controls() {
        assert_eq!(
            log_line("<html>\n  <body>\x1b[31m</body>\r\n"),
            "<html> <body>\\x1b[31m</body>"
        );
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(one_line("plain é ✓"), Cow::Borrowed(_)));
        assert!(matches!(json_text("{\"a\":\"b\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_text_reads_back_as_the_same_value() {
        let value = serde_json::json!({"t": HOSTILE, "k\u{202e}": [1, "\u{85}"]});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let safe = json_text(&text);
        assert!(raw_unsafe(&safe, &['\n']).is_empty(), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}
