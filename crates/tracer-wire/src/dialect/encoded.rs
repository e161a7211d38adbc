//! Every body is read through its `Content-Encoding`: decoded (bounded) before its dialect's
//! reader sees it, named ("N bytes of TYPE (ENCODING)") when it is still not text, and labelled
//! when decoding stopped short.

use super::json_util::whole;
use super::{BodyReading, Integrity, Reading};
use crate::content_encoding::{ReadableBody, readable};
use crate::hop::{BodyCapture, Header};

/// Reads `body` (with these headers) by `read`, after undoing its coding.
pub(super) fn read_through(
    headers: &[Header],
    body: &BodyCapture,
    read: impl FnOnce(&BodyCapture) -> BodyReading,
) -> BodyReading {
    let readable = readable(headers, body);
    let mut reading = match &readable.binary {
        Some(summary) => whole(Reading::Text(summary.clone())),
        None => read(&readable.body),
    };
    label(&mut reading, body, &readable);
    reading
}

/// A capture the recorder cut short is labelled so, whatever the reader made of its start; a
/// coding that could not be undone to its end says how far it went.
fn label(reading: &mut BodyReading, body: &BodyCapture, readable: &ReadableBody<'_>) {
    if body.truncated {
        reading.integrity = Integrity::Truncated {
            kept: body.bytes.len() as u64,
            total: body.total_len,
        };
    }
    if readable.stopped_short()
        && let Some(note) = readable.note()
    {
        reading.integrity = Integrity::PartlyDecoded(note);
    }
}
