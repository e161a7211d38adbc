//! Incremental decoders for the two streaming framings on the wire: SSE events and NDJSON lines.
//!
//! Both take bytes as they arrive, split anywhere (mid-line, mid-UTF-8 character, between CR and
//! LF), and hand back only complete records. `finish` returns what a cut-off stream left behind,
//! so readers can label a stream as truncated instead of losing it.

mod body_records;
pub(crate) use body_records::BodyRecords;

/// One Server-Sent Event: the `event:` name (if any), its `data:` lines joined by `\n`, and `id:`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
}

/// Splits a byte stream into lines ending in LF, CRLF or CR, keeping an unfinished tail.
#[derive(Debug, Default)]
struct LineSplitter {
    buf: Vec<u8>,
    /// The previous chunk ended in CR: a leading LF in the next chunk belongs to that line end.
    pending_cr: bool,
}

impl LineSplitter {
    fn push(&mut self, chunk: &[u8], mut on_line: impl FnMut(&[u8])) {
        let mut bytes = chunk;
        if self.pending_cr {
            self.pending_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' | b'\r' => {
                    self.buf.extend_from_slice(&bytes[start..i]);
                    on_line(&self.buf);
                    self.buf.clear();
                    if bytes[i] == b'\r' {
                        if i + 1 == bytes.len() {
                            self.pending_cr = true;
                        } else if bytes[i + 1] == b'\n' {
                            i += 1;
                        }
                    }
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        self.buf.extend_from_slice(&bytes[start..]);
    }

    fn take_rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

/// Decodes `text/event-stream` per the WHATWG rules that matter on these wires.
#[derive(Debug, Default)]
pub struct SseDecoder {
    lines: LineSplitter,
    current: SseEvent,
    has_field: bool,
    /// A `data:` field was seen in the current event: the next one is joined with `\n`.
    has_data: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk; returns every event the chunk completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut done = Vec::new();
        let Self {
            lines,
            current,
            has_field,
            has_data,
        } = self;
        lines.push(chunk, |line| {
            if line.is_empty() {
                if *has_field {
                    done.push(std::mem::take(current));
                    *has_field = false;
                    *has_data = false;
                }
                return;
            }
            if line.starts_with(b":") {
                return; // comment / keep-alive
            }
            let line = String::from_utf8_lossy(line);
            let (field, value) = match line.find(':') {
                Some(at) => {
                    let value = &line[at + 1..];
                    (&line[..at], value.strip_prefix(' ').unwrap_or(value))
                }
                None => (line.as_ref(), ""),
            };
            match field {
                "data" => {
                    if *has_data {
                        current.data.push('\n');
                    }
                    current.data.push_str(value);
                    *has_field = true;
                    *has_data = true;
                }
                "event" => {
                    current.event = Some(value.to_string());
                    *has_field = true;
                }
                "id" => {
                    current.id = Some(value.to_string());
                    *has_field = true;
                }
                _ => {}
            }
        });
        done
    }

    /// Ends the stream: an event left without its blank line is returned (a cut-off stream).
    pub(crate) fn finish(&mut self) -> Option<SseEvent> {
        let rest = self.lines.take_rest();
        let mut tail = if rest.is_empty() {
            Vec::new()
        } else {
            let mut line = rest;
            line.extend_from_slice(b"\n\n");
            self.push(&line)
        };
        if tail.is_empty() && self.has_field {
            self.has_field = false;
            self.has_data = false;
            return Some(std::mem::take(&mut self.current));
        }
        tail.pop()
    }
}

/// Decodes newline-delimited JSON (Ollama streams, stdio JSON-RPC): one record per non-empty line.
#[derive(Debug, Default)]
pub struct NdjsonDecoder {
    lines: LineSplitter,
}

impl NdjsonDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk; returns the complete, non-blank lines it finished (without line ends).
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        let mut done = Vec::new();
        self.lines.push(chunk, |line| {
            if !line.iter().all(u8::is_ascii_whitespace) {
                done.push(line.to_vec());
            }
        });
        done
    }

    /// Ends the stream: a last line without its newline (complete or cut off) is returned.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        let rest = self.lines.take_rest();
        (!rest.iter().all(u8::is_ascii_whitespace)).then_some(rest)
    }
}

/// Splits a byte stream into records (SSE events, NDJSON lines) as its chunks arrive.
pub trait RecordDecoder {
    type Record;
    /// Feeds a chunk; returns every record it completed.
    fn push(&mut self, chunk: &[u8]) -> Vec<Self::Record>;
    /// Ends the stream: the record left unfinished, if any.
    fn finish(&mut self) -> Option<Self::Record>;
}

impl RecordDecoder for SseDecoder {
    type Record = SseEvent;
    fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        SseDecoder::push(self, chunk)
    }
    fn finish(&mut self) -> Option<SseEvent> {
        SseDecoder::finish(self)
    }
}

impl RecordDecoder for NdjsonDecoder {
    type Record = Vec<u8>;
    fn push(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        NdjsonDecoder::push(self, chunk)
    }
    fn finish(&mut self) -> Option<Vec<u8>> {
        NdjsonDecoder::finish(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse_all(chunks: &[&[u8]]) -> (Vec<SseEvent>, Option<SseEvent>) {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(decoder.push(chunk));
        }
        (events, decoder.finish())
    }

    #[test]
    fn sse_events_split_across_chunks_with_crlf() {
        let (events, rest) = sse_all(&[
            b"event: message\r\nda",
            b"ta: {\"a\":1}\r",
            b"\n\r\n: ping\r\n\r\ndata: x\n",
            b"data: y\n\n",
        ]);
        assert_eq!(rest, None);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event.as_deref(), Some("message"));
        assert_eq!(events[0].data, "{\"a\":1}");
        assert_eq!(events[1].data, "x\ny");
    }

    #[test]
    fn sse_cut_off_event_is_returned_by_finish() {
        let (events, rest) = sse_all(&[b"data: one\n\ndata: tw"]);
        assert_eq!(events.len(), 1);
        assert_eq!(rest.map(|e| e.data), Some("tw".to_string()));
    }

    #[test]
    fn sse_byte_at_a_time_matches_whole() {
        let body = b"id: 7\nevent: e\ndata: a\ndata: b\n\ndata: c\n\n";
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for byte in body {
            events.extend(decoder.push(std::slice::from_ref(byte)));
        }
        assert_eq!(events, sse_all(&[body]).0);
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].data, "a\nb");
    }

    #[test]
    fn ndjson_lines_split_anywhere_and_tail_kept() {
        let mut decoder = NdjsonDecoder::new();
        let mut lines = decoder.push(b"{\"a\":1}\n{\"b\"");
        lines.extend(decoder.push(b":2}\r\n\n{\"c\":"));
        assert_eq!(lines, vec![b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec()]);
        assert_eq!(decoder.finish(), Some(b"{\"c\":".to_vec()));
    }
}
