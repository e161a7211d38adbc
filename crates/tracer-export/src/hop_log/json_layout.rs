//! JSON layouts: which of the common ways of writing JSON (compact, Python's spaced, pretty; with
//! ASCII, HTML-safe escapes, a final newline) gives a body's exact bytes, and writing a value so.

use serde_json::Value;

/// The JSON value of a body and the layout that writes it back byte for byte, if there is one.
pub(super) fn as_json(bytes: &[u8]) -> Option<(Value, Layout)> {
    let first = bytes.first()?;
    if !matches!(first, b'{' | b'[' | b'"') && !first.is_ascii_digit() && *first != b'-' {
        return None;
    }
    let value: Value = serde_json::from_slice(bytes).ok()?;
    if value.is_null() {
        return None;
    }
    let newline = bytes.ends_with(b"\n");
    let inner = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let styles: &[Style] = if inner.contains(&b'\n') {
        &[Style::Pretty]
    } else {
        &[Style::Compact, Style::Spaced]
    };
    let asciis: &[bool] = if bytes.is_ascii() {
        &[false, true]
    } else {
        &[false]
    };
    let htmls: &[bool] = if contains(bytes, b"\\u00") {
        &[false, true]
    } else {
        &[false]
    };
    for &style in styles {
        for &ascii in asciis {
            for &html in htmls {
                let layout = Layout {
                    style,
                    ascii,
                    html,
                    newline,
                };
                if layout.write(&value).as_bytes() == bytes {
                    return Some((value, layout));
                }
            }
        }
    }
    None
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `{"a":1,"b":[1,2]}` (serde_json, JavaScript, Go)
    Compact,
    /// `{"a": 1, "b": [1, 2]}` (Python's json.dumps default)
    Spaced,
    /// Two-space indentation, one item a line.
    Pretty,
}

/// How a JSON value was written: style, and which characters were escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    style: Style,
    /// Every non-ASCII character escaped as `\uXXXX` (Python's `ensure_ascii`).
    ascii: bool,
    /// `<`, `>`, `&`, U+2028 and U+2029 escaped (Go's encoding/json).
    html: bool,
    /// A newline after the value.
    newline: bool,
}

impl Layout {
    pub(super) fn name(self) -> String {
        let mut name = match self.style {
            Style::Compact => "compact",
            Style::Spaced => "spaced",
            Style::Pretty => "pretty",
        }
        .to_string();
        for (on, flag) in [
            (self.ascii, "+ascii"),
            (self.html, "+html"),
            (self.newline, "+newline"),
        ] {
            if on {
                name.push_str(flag);
            }
        }
        name
    }

    pub(super) fn parse(name: &str) -> Option<Layout> {
        let mut parts = name.split('+');
        let style = match parts.next()? {
            "compact" => Style::Compact,
            "spaced" => Style::Spaced,
            "pretty" => Style::Pretty,
            _ => return None,
        };
        let mut layout = Layout {
            style,
            ascii: false,
            html: false,
            newline: false,
        };
        for flag in parts {
            let slot = match flag {
                "ascii" => &mut layout.ascii,
                "html" => &mut layout.html,
                "newline" => &mut layout.newline,
                _ => return None,
            };
            if *slot {
                return None;
            }
            *slot = true;
        }
        (layout.name() == name).then_some(layout)
    }

    pub(super) fn write(self, value: &Value) -> String {
        let mut out = String::new();
        self.value(&mut out, value, 0);
        if self.newline {
            out.push('\n');
        }
        out
    }

    fn value(self, out: &mut String, value: &Value, depth: usize) {
        match value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => out.push_str(&n.to_string()),
            Value::String(s) => self.string(out, s),
            Value::Array(items) if items.is_empty() => out.push_str("[]"),
            Value::Object(map) if map.is_empty() => out.push_str("{}"),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    self.separator(out, i == 0, depth + 1);
                    self.value(out, item, depth + 1);
                }
                self.close(out, depth);
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (key, item)) in map.iter().enumerate() {
                    self.separator(out, i == 0, depth + 1);
                    self.string(out, key);
                    out.push_str(if self.style == Style::Compact {
                        ":"
                    } else {
                        ": "
                    });
                    self.value(out, item, depth + 1);
                }
                self.close(out, depth);
                out.push('}');
            }
        }
    }

    fn separator(self, out: &mut String, first: bool, depth: usize) {
        match self.style {
            Style::Compact if !first => out.push(','),
            Style::Spaced if !first => out.push_str(", "),
            Style::Pretty => {
                if !first {
                    out.push(',');
                }
                out.push('\n');
                out.push_str(&"  ".repeat(depth));
            }
            _ => {}
        }
    }

    fn close(self, out: &mut String, depth: usize) {
        if self.style == Style::Pretty {
            out.push('\n');
            out.push_str(&"  ".repeat(depth));
        }
    }

    fn string(self, out: &mut String, text: &str) {
        out.push('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => escape_unit(out, c as u32),
                '<' | '>' | '&' | '\u{2028}' | '\u{2029}' if self.html => {
                    escape_unit(out, c as u32);
                }
                c if self.ascii && !c.is_ascii() => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        escape_unit(out, u32::from(*unit));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

fn escape_unit(out: &mut String, unit: u32) {
    out.push_str(&format!("\\u{unit:04x}"));
}
