//! Redacts JSON text (also NDJSON and server-sent events, whose data lines are JSON) as it
//! streams: the string value of a secret field becomes `"[redacted]"`, so the text keeps its
//! shape and still parses; everything else is kept byte for byte.

use super::{REDACTED, is_secret_field};

/// Field names longer than this are not secret names; only this much of one is remembered.
const NAME_LIMIT: usize = 96;

/// A redactor that can be fed the text in any number of pieces, split anywhere (inside a
/// string, an escape or a name). It reads structure, not values: a secret inside a string that
/// itself holds JSON (a tool result's text) is not looked into.
#[derive(Debug, Default)]
pub struct JsonRedactor {
    in_string: bool,
    escaped: bool,
    /// Inside a secret string value: its bytes are dropped up to the closing quote.
    dropping: bool,
    /// The current (or last) string's content so far, raw (escapes kept), bounded.
    string: Vec<u8>,
    string_too_long: bool,
    /// The last token was a string (a field name if a `:` follows; only then is it looked at).
    last_was_string: bool,
    /// A `:` followed a secret field name: a string value next is dropped.
    value_is_secret: bool,
}

impl JsonRedactor {
    /// Appends the redacted form of `bytes` to `out`. Runs of ordinary bytes are copied whole;
    /// only quotes, backslashes and colons are looked at one by one.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            if self.escaped {
                // The byte after a backslash: never a quote that ends the string.
                if !self.dropping {
                    self.string_byte(rest[0], out);
                } else {
                    self.escaped = false;
                }
                at += 1;
                continue;
            }
            let special: fn(&u8) -> bool = if self.in_string {
                |b| matches!(b, b'"' | b'\\')
            } else {
                |b| matches!(b, b'"' | b':')
            };
            let run = rest.iter().position(special).unwrap_or(rest.len());
            if run > 0 {
                self.ordinary_run(&rest[..run], out);
                at += run;
                continue;
            }
            if self.dropping {
                self.drop_byte(rest[0], out);
            } else if self.in_string {
                self.string_byte(rest[0], out);
            } else {
                self.structure_byte(rest[0], out);
            }
            at += 1;
        }
    }

    /// Bytes with no quote, backslash (in a string) or colon (outside one).
    fn ordinary_run(&mut self, run: &[u8], out: &mut Vec<u8>) {
        if self.dropping {
            return;
        }
        out.extend_from_slice(run);
        if self.in_string {
            let room = NAME_LIMIT.saturating_sub(self.string.len());
            self.string.extend_from_slice(&run[..room.min(run.len())]);
            self.string_too_long |= run.len() > room;
        } else if run.iter().any(|b| !b.is_ascii_whitespace()) {
            self.value_is_secret = false;
            self.last_was_string = false;
        }
    }

    fn drop_byte(&mut self, byte: u8, out: &mut Vec<u8>) {
        if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            out.push(b'"');
            self.dropping = false;
            self.in_string = false;
            // A value's content is not kept: it can name no field.
            self.string.clear();
            self.last_was_string = true;
        }
    }

    fn string_byte(&mut self, byte: u8, out: &mut Vec<u8>) {
        out.push(byte);
        if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            self.in_string = false;
            self.last_was_string = true;
            return;
        }
        if self.string.len() < NAME_LIMIT {
            self.string.push(byte);
        } else {
            self.string_too_long = true;
        }
    }

    fn structure_byte(&mut self, byte: u8, out: &mut Vec<u8>) {
        out.push(byte);
        match byte {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' if self.value_is_secret => {
                out.extend_from_slice(REDACTED.as_bytes());
                self.value_is_secret = false;
                self.in_string = true;
                self.dropping = true;
            }
            b'"' => {
                self.in_string = true;
                self.string.clear();
                self.string_too_long = false;
                self.last_was_string = false;
            }
            b':' => {
                self.value_is_secret =
                    self.last_was_string && !self.string_too_long && names_secret(&self.string);
                self.last_was_string = false;
            }
            _ => {
                self.value_is_secret = false;
                self.last_was_string = false;
            }
        }
    }
}

/// Whether a string's raw content (escapes as written) is a secret field's name.
fn names_secret(raw: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(raw) else {
        return false;
    };
    if !text.contains('\\') {
        return is_secret_field(text);
    }
    let quoted = format!("\"{text}\"");
    serde_json::from_str::<String>(&quoted).is_ok_and(|name| is_secret_field(&name))
}
