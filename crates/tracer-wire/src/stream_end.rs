//! Whether a streamed answer reached its end event before the client stopped reading:
//! Responses' `response.completed` (or `.failed`, `.incomplete`), Anthropic's `message_stop`,
//! chat completions' `data: [DONE]`, Ollama's `"done": true`, a Gemini chunk with a
//! `finishReason`, the closing `]` or `}` of a JSON answer (Gemini's JSON-array stream), and
//! an MCP server's JSON-RPC response in an SSE answer to a POST (the SDK's client hangs up on it).
//!
//! [`EndWatch`] is fed every byte as it passes and keeps a bounded state (the current record's
//! first [`WHOLE`] bytes and last [`TAIL`] bytes), so it works for answers of any size; a
//! compressed answer is decoded only at the end, from the kept capture, when that is whole.

mod cut;
mod records;

use serde_json::Value;

use crate::content_encoding::{Encoding, readable};
use crate::hop::{BodyCapture, Header, header_text};
use records::{JsonDepth, first_type, json_end, named_end};

/// A record up to this size is kept whole and read as JSON.
const WHOLE: usize = 16 * 1024;
/// Of a bigger record, its last bytes are kept (where `finishReason` and `done` sit).
const TAIL: usize = 2 * 1024;

/// The event a stream ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndEvent {
    ResponseCompleted,
    ResponseFailed,
    ResponseIncomplete,
    MessageStop,
    Done,
    OllamaDone,
    FinishReason,
    JsonClosed,
    JsonRpcAnswer,
}

impl EndEvent {
    /// How the event is named on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            EndEvent::ResponseCompleted => "response.completed",
            EndEvent::ResponseFailed => "response.failed",
            EndEvent::ResponseIncomplete => "response.incomplete",
            EndEvent::MessageStop => "message_stop",
            EndEvent::Done => "[DONE]",
            EndEvent::OllamaDone => "done: true",
            EndEvent::FinishReason => "finishReason",
            EndEvent::JsonClosed => "the end of the JSON body",
            EndEvent::JsonRpcAnswer => "the JSON-RPC response",
        }
    }

    /// The note a hop gets when its client closed right after this event.
    pub fn stopped_reading_note(self) -> String {
        format!(
            "the client stopped reading after the last event ({})",
            self.as_str()
        )
    }
}

/// The error the proxy recorded, before it knew end events, for a client that closed early.
pub const WENT_AWAY_MID_RESPONSE: &str = "client went away mid-response";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Sse,
    Ndjson,
    Json,
}

/// One record's bytes, bounded: the first `WHOLE` and the last `TAIL`.
#[derive(Debug, Default, Clone)]
struct Record {
    head: Vec<u8>,
    tail: Vec<u8>,
    len: usize,
}

impl Record {
    /// Empty again, keeping its buffers.
    fn clear(&mut self) {
        self.head.clear();
        self.tail.clear();
        self.len = 0;
    }

    fn extend(&mut self, bytes: &[u8]) {
        self.len += bytes.len();
        let room = WHOLE.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        if bytes.len() >= TAIL {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - TAIL..]);
        } else {
            self.tail.extend_from_slice(bytes);
            if self.tail.len() >= 2 * TAIL {
                self.tail.drain(..self.tail.len() - TAIL);
            }
        }
    }

    fn whole(&self) -> Option<&[u8]> {
        (self.len <= WHOLE).then_some(self.head.as_slice())
    }

    fn tail_has(&self, needle: &[u8]) -> bool {
        has(&self.tail, needle)
    }
}

/// Which SSE field the current line is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    /// The name so far, before its colon (the first bytes of it: no field name is longer).
    Name([u8; 8], u8),
    Data {
        skip_space: bool,
    },
    Event,
    Ignored,
}

/// Watches a response body as it passes for the end event of its stream.
#[derive(Debug, Clone)]
pub struct EndWatch {
    /// None until the first byte that is not white space, when no type said.
    framing: Option<Framing>,
    /// Compressed: nothing is watched as it passes; the kept capture is read at the end.
    encoded: Option<Vec<Header>>,
    field: Field,
    at_line_start: bool,
    event_name: Vec<u8>,
    data: Record,
    /// A record has started since the last whole one.
    pending: bool,
    last: Option<EndEvent>,
    json: JsonDepth,
}

impl EndWatch {
    /// A watch for a body of this `Content-Type` and `Content-Encoding`; None when the type
    /// is neither a stream nor JSON (an image, a page, a download: nothing to watch).
    pub fn for_body(
        content_type: Option<&str>,
        content_encoding: Option<&str>,
    ) -> Option<EndWatch> {
        let mime = content_type.unwrap_or_default().to_ascii_lowercase();
        let framing = if mime.contains("text/event-stream") {
            Some(Framing::Sse)
        } else if mime.contains("ndjson") || mime.contains("jsonl") {
            Some(Framing::Ndjson)
        } else if mime.contains("json") {
            Some(Framing::Json)
        } else if mime.trim().is_empty() {
            None
        } else {
            return None;
        };
        let encoded = match Encoding::parse(content_encoding.unwrap_or_default()) {
            Encoding::Identity => None,
            _ => {
                let mut headers = vec![Header::new(
                    "content-encoding",
                    content_encoding.unwrap_or_default(),
                )];
                headers.extend(content_type.map(|t| Header::new("content-type", t)));
                Some(headers)
            }
        };
        Some(EndWatch {
            framing,
            encoded,
            field: Field::Name([0; 8], 0),
            at_line_start: true,
            event_name: Vec::new(),
            data: Record::default(),
            pending: false,
            last: None,
            json: JsonDepth::default(),
        })
    }

    /// Feeds the next bytes of the body as they passed. Runs of bytes within a line are
    /// taken at once; only line ends and field names are looked at byte by byte.
    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.encoded.is_some() {
            return;
        }
        while let Some(&byte) = bytes.first() {
            let Some(framing) = self.framing else {
                if !byte.is_ascii_whitespace() {
                    self.framing = Some(match byte {
                        b'{' | b'[' => Framing::Json,
                        _ => Framing::Sse,
                    });
                } else {
                    bytes = &bytes[1..];
                }
                continue;
            };
            let line = bytes
                .iter()
                .position(|b| matches!(b, b'\n' | b'\r'))
                .unwrap_or(bytes.len());
            let run = match (framing, &self.field) {
                (Framing::Sse, Field::Data { skip_space: false }) if line > 0 => {
                    self.data.extend(&bytes[..line]);
                    self.at_line_start = false;
                    line
                }
                (Framing::Sse, Field::Ignored) if line > 0 => {
                    self.at_line_start = false;
                    line
                }
                (Framing::Sse, _) => {
                    self.sse_byte(byte);
                    1
                }
                (Framing::Ndjson, _) if line > 0 => {
                    self.data.extend(&bytes[..line]);
                    line
                }
                // One JSON value, or JSON lines under a JSON type: both are watched.
                (Framing::Json, _) if line > 0 => {
                    for &b in &bytes[..line] {
                        self.json.push(b);
                    }
                    self.data.extend(&bytes[..line]);
                    line
                }
                // A line end (or a carriage return) in JSON lines or JSON.
                (_, _) => {
                    if framing == Framing::Json {
                        self.json.push(byte);
                    }
                    self.ndjson_byte(byte);
                    1
                }
            };
            bytes = &bytes[run..];
        }
    }

    /// The end event the body reached, if its last record is one. `kept` is the kept capture
    /// of a compressed body (read only when it is whole: a tail of compressed bytes cannot be
    /// decoded alone).
    pub fn finish(mut self, kept: Option<&BodyCapture>) -> Option<EndEvent> {
        if let Some(headers) = self.encoded.take() {
            let kept = kept.filter(|body| !body.truncated)?;
            let body = readable(&headers, kept);
            let mut plain = EndWatch::for_body(header_text(&headers, "content-type"), None)?;
            plain.push(body.bytes());
            return plain.finish(None);
        }
        match self.framing? {
            Framing::Json if self.json.values <= 1 => {
                self.json.closed.then_some(EndEvent::JsonClosed)
            }
            Framing::Json | Framing::Ndjson => {
                if self.data.head.trim_ascii().is_empty() {
                    self.last
                } else {
                    // A last line without its newline counts when it is whole JSON.
                    let line = self.data.whole()?;
                    serde_json::from_slice::<Value>(line.trim_ascii())
                        .ok()
                        .and_then(|value| json_end(&value))
                }
            }
            Framing::Sse if self.pending && self.at_line_start => self.sse_event(),
            Framing::Sse if self.pending => None,
            Framing::Sse => self.last,
        }
    }

    fn sse_byte(&mut self, byte: u8) {
        match byte {
            b'\r' => {}
            b'\n' => {
                if self.at_line_start {
                    // A blank line: the event is whole.
                    if self.pending {
                        self.last = self.sse_event();
                        self.pending = false;
                    }
                    self.event_name.clear();
                    self.data.clear();
                } else if let Field::Data { .. } = self.field {
                    // Data lines of one event are joined by newlines.
                    self.data.extend(b"\n");
                }
                self.field = Field::Name([0; 8], 0);
                self.at_line_start = true;
            }
            _ => {
                self.at_line_start = false;
                match &mut self.field {
                    Field::Name(name, len) if byte == b':' => {
                        self.field = match &name[..usize::from(*len)] {
                            b"data" => Field::Data { skip_space: true },
                            b"event" => {
                                self.event_name.clear();
                                Field::Event
                            }
                            _ => Field::Ignored,
                        };
                        if self.field != Field::Ignored {
                            self.pending = true;
                        }
                    }
                    Field::Name(name, len) if usize::from(*len) < name.len() => {
                        name[usize::from(*len)] = byte;
                        *len += 1;
                    }
                    Field::Name(..) => self.field = Field::Ignored,
                    Field::Data { skip_space } => {
                        if !(*skip_space && byte == b' ') {
                            self.data.extend(&[byte]);
                        }
                        *skip_space = false;
                    }
                    Field::Event if self.event_name.len() < 64 => self.event_name.push(byte),
                    Field::Event | Field::Ignored => {}
                }
            }
        }
    }

    fn ndjson_byte(&mut self, byte: u8) {
        match byte {
            b'\n' => {
                if !self.data.head.trim_ascii().is_empty() {
                    self.last = self.ndjson_record();
                }
                self.data.clear();
            }
            _ => self.data.extend(&[byte]),
        }
    }

    /// The current SSE event, if it is an end event.
    fn sse_event(&self) -> Option<EndEvent> {
        let name = std::str::from_utf8(&self.event_name)
            .unwrap_or_default()
            .trim();
        if let Some(event) = named_end(name) {
            return Some(event);
        }
        let whole = self.data.whole();
        if whole.is_some_and(|data| data.trim_ascii() == b"[DONE]") {
            return Some(EndEvent::Done);
        }
        // Most events say their type first: the rest is parsed only when it may end the stream.
        let kind = first_type(&self.data.head[..self.data.head.len().min(512)]);
        if let Some(event) = kind.and_then(named_end) {
            return Some(event);
        }
        match whole {
            // A record that says its type first says no more about an end.
            _ if kind.is_some() => None,
            Some(data) if may_end(data) => serde_json::from_slice::<Value>(data)
                .ok()
                .and_then(|value| json_end(&value)),
            Some(_) => None,
            None => self
                .data
                .tail_has(b"\"finishReason\"")
                .then_some(EndEvent::FinishReason),
        }
    }

    /// The current NDJSON line, if it is an end record.
    fn ndjson_record(&self) -> Option<EndEvent> {
        let done = |bytes: &[u8]| has(bytes, b"\"done\":true") || has(bytes, b"\"done\": true");
        match self.data.whole() {
            Some(line) if done(line) => serde_json::from_slice::<Value>(line.trim_ascii())
                .ok()
                .and_then(|value| json_end(&value)),
            Some(_) => None,
            None => done(&self.data.tail).then_some(EndEvent::OllamaDone),
        }
    }
}

/// Whether a record's JSON may say the stream ends (a `finishReason`, a `done`, a `type` not
/// given first), so that it is worth parsing.
fn may_end(data: &[u8]) -> bool {
    has(data, b"\"finishReason\"")
        || has(data, b"\"done\"")
        || has(data, b"\"type\"")
        || has(data, b"\"jsonrpc\"")
}

fn has(bytes: &[u8], needle: &[u8]) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle)
}

/// The end event a recorded response body reached (decoded if compressed), for hops recorded
/// before the proxy watched for them.
pub fn reached_end(headers: &[Header], body: &BodyCapture) -> Option<EndEvent> {
    if body.truncated {
        return None;
    }
    let mut watch = EndWatch::for_body(
        header_text(headers, "content-type"),
        header_text(headers, "content-encoding"),
    )?;
    watch.push(&body.bytes);
    watch.finish(Some(body))
}

#[cfg(test)]
mod tests;
