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
    /// Appends the redacted form of `bytes` to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        for &byte in bytes {
            if byte == b'&' {
                out.push(byte);
                self.name.clear();
                self.name_too_long = false;
                self.in_value = false;
                self.dropping = false;
            } else if self.in_value {
                if !self.dropping {
                    out.push(byte);
                }
            } else if byte == b'=' {
                out.push(byte);
                self.in_value = true;
                if !self.name_too_long && is_secret_param(&percent_decoded(&self.name, true)) {
                    out.extend_from_slice(REDACTED.as_bytes());
                    self.dropping = true;
                }
            } else {
                out.push(byte);
                if self.name.len() < NAME_LIMIT {
                    self.name.push(byte);
                } else {
                    self.name_too_long = true;
                }
            }
        }
    }
}
