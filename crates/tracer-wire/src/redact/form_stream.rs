//! Redacts `name=value&...` text (a query, an `application/x-www-form-urlencoded` body) as it
//! streams: the value of a secret parameter becomes the marker, everything else is kept.

use super::{REDACTED, is_secret_param, percent_decoded};

/// Names longer than this are not secret names; only this much of one is remembered.
const NAME_LIMIT: usize = 96;

/// A redactor that can be fed the text in any number of pieces, split anywhere.
#[derive(Debug, Default)]
pub struct FormRedactor {
    /// The current parameter's name so far (raw, bounded).
    name: Vec<u8>,
    name_too_long: bool,
    in_value: bool,
    /// The current value is a secret: its bytes are dropped.
    dropping: bool,
}

impl FormRedactor {
    /// Appends the redacted form of `bytes` to `out`; runs up to the next `&` or `=` are copied
    /// (or dropped) whole.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            let special: fn(&u8) -> bool = if self.in_value {
                |b| *b == b'&'
            } else {
                |b| matches!(b, b'&' | b'=')
            };
            let run = rest.iter().position(special).unwrap_or(rest.len());
            if run > 0 {
                let run = &rest[..run];
                if !self.dropping {
                    out.extend_from_slice(run);
                }
                if !self.in_value {
                    let room = NAME_LIMIT.saturating_sub(self.name.len());
                    self.name.extend_from_slice(&run[..room.min(run.len())]);
                    self.name_too_long |= run.len() > room;
                }
                at += run.len();
                continue;
            }
            let byte = rest[0];
            out.push(byte);
            if byte == b'&' {
                self.name.clear();
                self.name_too_long = false;
                self.in_value = false;
                self.dropping = false;
            } else {
                self.in_value = true;
                if !self.name_too_long && is_secret_param(&percent_decoded(&self.name, true)) {
                    out.extend_from_slice(REDACTED.as_bytes());
                    self.dropping = true;
                }
            }
            at += 1;
        }
    }
}
