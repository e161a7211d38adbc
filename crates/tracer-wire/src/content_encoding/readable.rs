//! A recorded body made ready to read: its codings undone (bounded by `READ_LIMIT`), and a
//! body that is still not text named by its size and type ("N bytes of TYPE (ENCODING)")
//! instead of shown as bytes.

use std::borrow::Cow;

use super::{Decoding, Encoding, READ_LIMIT, decode};
use crate::hop::{BodyCapture, Header, header_text};

/// A body as the readers and faces read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadableBody<'a> {
    /// What to read: the decoded bytes (`truncated` when decoding stopped short or the capture
    /// was cut), or the recorded capture itself when it had no coding to undo.
    pub body: Cow<'a, BodyCapture>,
    /// The codings of the recorded bytes (`gzip`, `zstd`), when they had any.
    pub coding: Option<String>,
    /// How undoing them went (None when nothing was undone).
    pub decoding: Option<Decoding>,
    /// "N bytes of TYPE (ENCODING)" when what there is to read is still not text.
    pub binary: Option<String>,
    /// The bytes recorded (before decoding), and the body's length on the wire.
    pub recorded: usize,
    pub wire_len: u64,
    pub capture_truncated: bool,
}

impl ReadableBody<'_> {
    /// The bytes to read.
    pub fn bytes(&self) -> &[u8] {
        &self.body.bytes
    }

    /// Whether the bytes were decoded from a coding.
    pub fn was_decoded(&self) -> bool {
        self.decoding.is_some() && !matches!(self.body, Cow::Borrowed(_))
    }

    /// One line about the coding for a body's heading (None when the body had none):
    /// `gzip: 1234 bytes decoded from 567`, or how decoding stopped.
    pub fn note(&self) -> Option<String> {
        let coding = self.coding.as_deref()?;
        let decoded = self.body.bytes.len();
        Some(match &self.decoding {
            None => format!("{coding}: not decoded (tracer undoes gzip, deflate, br and zstd)"),
            Some(Decoding::Whole) => {
                format!("{coding}: {decoded} bytes decoded from {}", self.recorded)
            }
            Some(Decoding::Ended) if self.capture_truncated => format!(
                "{coding}: decoded as far as the {} kept bytes of {} go ({decoded} bytes)",
                self.recorded, self.wire_len
            ),
            Some(Decoding::Ended) => format!(
                "{coding}: the recorded bytes end before the {coding} stream does; \
                 decoded as far as they go ({decoded} bytes)"
            ),
            Some(Decoding::AtLimit) => format!(
                "{coding}: decoding stopped at tracer's reading bound of {READ_LIMIT} bytes"
            ),
            Some(Decoding::Corrupt(why)) if self.was_decoded() => {
                format!("{coding}: not valid past {decoded} decoded bytes ({why})")
            }
            Some(Decoding::Corrupt(why)) => {
                format!("{coding}: not {coding} data ({why}); read as recorded")
            }
        })
    }

    /// Whether decoding stopped before the encoded stream's end for a reason worth telling a
    /// reader: a cut capture, the reading bound, corrupt data. The recorded bytes of a stream
    /// whose end (its trailer) never passed, decoded whole, are not.
    pub fn stopped_short(&self) -> bool {
        match &self.decoding {
            Some(Decoding::Ended) => self.capture_truncated,
            Some(Decoding::AtLimit | Decoding::Corrupt(_)) => true,
            _ => false,
        }
    }
}

/// The body of a message with these headers, ready to read.
pub fn readable<'a>(headers: &[Header], body: &'a BodyCapture) -> ReadableBody<'a> {
    let encoding = Encoding::of(headers);
    let coding = encoding.label();
    let mut out = ReadableBody {
        body: Cow::Borrowed(body),
        coding: coding.clone(),
        decoding: None,
        binary: None,
        recorded: body.bytes.len(),
        wire_len: body.total_len,
        capture_truncated: body.truncated,
    };
    match &encoding {
        Encoding::Known(codings) if !body.bytes.is_empty() => {
            let decoded = decode(codings, &body.bytes, READ_LIMIT);
            let unreadable = matches!(decoded.decoding, Decoding::Corrupt(_))
                && decoded.bytes.is_empty()
                && !looks_binary(&body.bytes);
            // A body labelled with a coding it does not have (some servers do) is read as is.
            if !unreadable {
                let truncated = body.truncated || decoded.decoding != Decoding::Whole;
                out.body = Cow::Owned(BodyCapture {
                    total_len: decoded.bytes.len() as u64,
                    bytes: decoded.bytes,
                    truncated,
                });
            }
            out.decoding = Some(decoded.decoding);
        }
        Encoding::Known(_) => out.decoding = Some(Decoding::Whole),
        Encoding::Identity | Encoding::Unknown(_) => {}
    }
    let undecoded = matches!(encoding, Encoding::Unknown(_));
    if !out.body.bytes.is_empty() && (undecoded || looks_binary(&out.body.bytes)) {
        out.binary = Some(binary_summary(
            body.total_len,
            header_text(headers, "content-type"),
            coding.as_deref(),
        ));
    }
    out
}

/// Whether bytes are not text: not UTF-8 (a character cut by the end aside), or holding
/// control characters other than tab, newline, carriage return, form feed and escape.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) if error.error_len().is_none() => {
            std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return true,
    };
    text.bytes()
        .any(|b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b)) || b == 0x7f)
}

/// "N bytes of TYPE (ENCODING)": a body that is not text, by its recorded length, its
/// `Content-Type` (its media type alone, printable ASCII only) and its coding.
pub(crate) fn binary_summary(len: u64, content_type: Option<&str>, coding: Option<&str>) -> String {
    let media: String = content_type
        .and_then(|value| value.split(';').next())
        .unwrap_or_default()
        .trim()
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(80)
        .collect();
    let media = if media.is_empty() {
        "binary data".to_string()
    } else {
        media
    };
    match coding {
        Some(coding) => {
            let coding: String = coding
                .chars()
                .filter(|c| c.is_ascii_graphic() || *c == ' ')
                .take(40)
                .collect();
            format!("{len} bytes of {media} ({coding})")
        }
        None => format!("{len} bytes of {media}"),
    }
}
