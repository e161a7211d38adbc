//! The journal's frame format: one hop event per frame, `[u32 length][kind][fields]`, all
//! integers little-endian, strings and bytes length-prefixed. Decoding never trusts a length.

use tracer_wire::hop::{
    BodyCapture, BodyPiece, BodySide, Chunk, Header, HopEnd, HopEvent, HopStart, HopState,
    RequestDone, ServerLogLine,
};

/// Bytes before a frame's payload: its length.
pub(crate) const FRAME_HEADER: usize = 4;

const STARTED: u8 = 1;
const ENDED: u8 = 2;
const REQUEST_DONE: u8 = 3;
const SERVER_LOG: u8 = 4;
const BODY_PIECE: u8 = 5;
const WS_MESSAGES: u8 = 6;

/// Whether a frame's payload is a hop's start (without decoding the rest).
pub(crate) fn is_start(payload: &[u8]) -> bool {
    payload.first() == Some(&STARTED)
}

/// Appends one framed event to `out`.
pub(crate) fn encode(event: &HopEvent, out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&[0; FRAME_HEADER]);
    let mut w = Writer(out);
    match event {
        HopEvent::Started(start) => {
            w.u8(STARTED);
            w.str(&start.id);
            w.str(&start.route);
            w.str(start.role.as_str());
            w.str(start.transport.as_str());
            w.str(&start.peer);
            w.str(&start.method);
            w.str(&start.path);
            w.str(&start.url);
            w.headers(&start.request_headers);
            w.i64(start.started_unix_ns);
            w.opt_str(start.run_id.as_deref());
        }
        HopEvent::Ended(end) => {
            w.u8(ENDED);
            w.str(&end.id);
            w.opt_str(end.state.map(HopState::as_str));
            w.opt_i64(end.status.map(i64::from));
            w.headers(&end.response_headers);
            w.body(&end.request_body);
            w.body(&end.response_body);
            w.opt_i64(end.request_ended_unix_ns);
            w.opt_i64(end.response_head_unix_ns);
            w.opt_i64(end.response_first_byte_unix_ns);
            w.opt_i64(end.response_ended_unix_ns);
            w.u64(end.chunks.len() as u64);
            for chunk in &end.chunks {
                w.i64(chunk.offset_ns);
                w.u64(chunk.size);
            }
            w.u8(u8::from(end.chunks_truncated));
            w.opt_str(end.error.as_deref());
            w.headers(&end.response_trailers);
            // Last and only when there are: a journal left by an older tracer still decodes.
            super::journal_ws::encode_tail(end.note.as_deref(), end.websocket.as_ref(), w.0);
        }
        HopEvent::RequestDone(done) => {
            w.request_done(&done.id, &done.request_body, done.request_ended_unix_ns)
        }
        HopEvent::ServerLog(line) => {
            w.u8(SERVER_LOG);
            w.str(&line.route);
            w.i64(line.logged_unix_ns);
            w.str(&line.line);
        }
        HopEvent::BodyPiece(piece) => {
            w.body_piece_head(&piece.id, piece.side, piece.seq, piece.bytes.len());
            w.0.extend_from_slice(&piece.bytes);
        }
        HopEvent::WsMessages(batch) => super::journal_ws::encode_batch(WS_MESSAGES, batch, w.0),
    }
    let len = u32::try_from(out.len() - at - FRAME_HEADER).unwrap_or(u32::MAX);
    out[at..at + FRAME_HEADER].copy_from_slice(&len.to_le_bytes());
}

/// Appends one framed `RequestDone` from borrowed parts (no copy of the body before this one).
pub(crate) fn encode_request_done(
    id: &str,
    body: &BodyCapture,
    ended_unix_ns: i64,
    out: &mut Vec<u8>,
) {
    let at = out.len();
    out.extend_from_slice(&[0; FRAME_HEADER]);
    Writer(out).request_done(id, body, ended_unix_ns);
    let len = u32::try_from(out.len() - at - FRAME_HEADER).unwrap_or(u32::MAX);
    out[at..at + FRAME_HEADER].copy_from_slice(&len.to_le_bytes());
}

/// Appends the head of one framed body piece of `len` bytes: the frame is whole once exactly
/// those bytes follow it (the caller writes them from where they are, with no copy in between).
pub(crate) fn encode_body_piece_head(
    id: &str,
    side: BodySide,
    seq: u32,
    len: usize,
    out: &mut Vec<u8>,
) {
    let at = out.len();
    out.extend_from_slice(&[0; FRAME_HEADER]);
    Writer(out).body_piece_head(id, side, seq, len);
    let payload = out.len() - at - FRAME_HEADER + len;
    let frame_len = u32::try_from(payload).unwrap_or(u32::MAX);
    out[at..at + FRAME_HEADER].copy_from_slice(&frame_len.to_le_bytes());
}

/// Decodes one frame's payload (the bytes after its length).
pub(crate) fn decode(payload: &[u8]) -> Result<HopEvent, String> {
    let mut r = Reader(payload);
    let event = match r.u8()? {
        STARTED => HopEvent::Started(Box::new(HopStart {
            id: r.string()?,
            route: r.string()?,
            role: r.string()?.parse()?,
            transport: r.string()?.parse()?,
            peer: r.string()?,
            method: r.string()?,
            path: r.string()?,
            url: r.string()?,
            request_headers: r.headers()?,
            started_unix_ns: r.i64()?,
            // Journals written before runs were recorded end here.
            run_id: if r.0.is_empty() {
                None
            } else {
                r.opt_string()?
            },
        })),
        ENDED => {
            let id = r.string()?;
            let state = r.opt_string()?.map(|s| s.parse()).transpose()?;
            let status = r.opt_i64()?.and_then(|s| u16::try_from(s).ok());
            let response_headers = r.headers()?;
            let request_body = r.body()?;
            let response_body = r.body()?;
            let request_ended_unix_ns = r.opt_i64()?;
            let response_head_unix_ns = r.opt_i64()?;
            let response_first_byte_unix_ns = r.opt_i64()?;
            let response_ended_unix_ns = r.opt_i64()?;
            let count = r.len()?;
            let mut chunks = Vec::with_capacity(count.min(r.0.len() / 16));
            for _ in 0..count {
                chunks.push(Chunk {
                    offset_ns: r.i64()?,
                    size: r.u64()?,
                });
            }
            let chunks_truncated = r.u8()? != 0;
            let error = r.opt_string()?;
            let response_trailers = r.headers()?;
            let (note, websocket) = super::journal_ws::decode_tail(&mut r.0)?;
            HopEvent::Ended(Box::new(HopEnd {
                id,
                state,
                status,
                response_headers,
                response_trailers,
                request_body,
                response_body,
                request_ended_unix_ns,
                response_head_unix_ns,
                response_first_byte_unix_ns,
                response_ended_unix_ns,
                chunks,
                chunks_truncated,
                error,
                note,
                websocket,
            }))
        }
        REQUEST_DONE => HopEvent::RequestDone(Box::new(RequestDone {
            id: r.string()?,
            request_body: r.body()?,
            request_ended_unix_ns: r.i64()?,
        })),
        SERVER_LOG => HopEvent::ServerLog(Box::new(ServerLogLine {
            route: r.string()?,
            logged_unix_ns: r.i64()?,
            line: r.string()?,
        })),
        BODY_PIECE => HopEvent::BodyPiece(Box::new(BodyPiece {
            id: r.string()?,
            side: BodySide::from_code(r.u8()?).ok_or("unknown body side")?,
            seq: u32::try_from(r.u64()?).map_err(|e| e.to_string())?,
            bytes: r.bytes()?,
        })),
        WS_MESSAGES => HopEvent::WsMessages(Box::new(super::journal_ws::decode_batch(&mut r.0)?)),
        other => return Err(format!("unknown event kind {other}")),
    };
    if r.0.is_empty() {
        Ok(event)
    } else {
        Err(format!("{} bytes after the event", r.0.len()))
    }
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn request_done(&mut self, id: &str, body: &BodyCapture, ended_unix_ns: i64) {
        self.u8(REQUEST_DONE);
        self.str(id);
        self.body(body);
        self.i64(ended_unix_ns);
    }
    fn body_piece_head(&mut self, id: &str, side: BodySide, seq: u32, len: usize) {
        self.u8(BODY_PIECE);
        self.str(id);
        self.u8(side.code());
        self.u64(u64::from(seq));
        self.u64(len as u64);
    }
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.0.extend_from_slice(v);
    }
    fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    fn opt_str(&mut self, v: Option<&str>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.str(v);
            }
            None => self.u8(0),
        }
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.i64(v);
            }
            None => self.u8(0),
        }
    }
    fn headers(&mut self, headers: &[Header]) {
        self.u64(headers.len() as u64);
        for header in headers {
            self.str(&header.name);
            self.bytes(&header.value);
        }
    }
    fn body(&mut self, body: &BodyCapture) {
        self.bytes(&body.bytes);
        self.u64(body.total_len);
        self.u8(u8::from(body.truncated));
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err(format!("needs {n} bytes, {} left", self.0.len()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut raw = [0; 8];
        raw.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(raw))
    }
    fn i64(&mut self) -> Result<i64, String> {
        let mut raw = [0; 8];
        raw.copy_from_slice(self.take(8)?);
        Ok(i64::from_le_bytes(raw))
    }
    fn len(&mut self) -> Result<usize, String> {
        usize::try_from(self.u64()?).map_err(|e| e.to_string())
    }
    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let n = self.len()?;
        Ok(self.take(n)?.to_vec())
    }
    fn string(&mut self) -> Result<String, String> {
        String::from_utf8(self.bytes()?).map_err(|e| e.to_string())
    }
    fn opt_string(&mut self) -> Result<Option<String>, String> {
        match self.u8()? {
            0 => Ok(None),
            _ => self.string().map(Some),
        }
    }
    fn opt_i64(&mut self) -> Result<Option<i64>, String> {
        match self.u8()? {
            0 => Ok(None),
            _ => self.i64().map(Some),
        }
    }
    fn headers(&mut self) -> Result<Vec<Header>, String> {
        let count = self.len()?;
        let mut headers = Vec::with_capacity(count.min(self.0.len() / 16));
        for _ in 0..count {
            let name = self.string()?;
            headers.push(Header::new(name, self.bytes()?));
        }
        Ok(headers)
    }
    fn body(&mut self) -> Result<BodyCapture, String> {
        Ok(BodyCapture {
            bytes: self.bytes()?,
            total_len: self.u64()?,
            truncated: self.u8()? != 0,
        })
    }
}

#[cfg(test)]
#[path = "journal_codec_tests.rs"]
mod tests;
