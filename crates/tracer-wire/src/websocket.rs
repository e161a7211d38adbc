//! RFC 6455 frames read from a copy of one direction's bytes as they pass: unmasked, fragments
//! joined into messages, control frames kept, `permessage-deflate` (RFC 7692) inflated, bounded.
//!
//! A [`FrameReader`] never holds more than the kept bytes (at most `budget` per direction), one
//! frame head (14 bytes), a 32 KiB inflate window and a 32 KiB output step, whatever size the
//! frames claim; it never changes the bytes it reads (the proxy relays them as they came).

mod deflate_terms;

use flate2::{Decompress, FlushDecompress, Status};

use crate::hop::ws_message::opcode;
use crate::hop::{WsDirection, WsMessage};

pub use deflate_terms::DeflateTerms;

/// Messages listed per direction; beyond, messages are counted, not listed.
const MAX_LISTED: usize = 20_000;

/// The most one compressed message is inflated: past it, the direction is no longer inflated
/// (a deflate bomb costs this much work and no memory).
const INFLATE_LIMIT: u64 = 64 * 1024 * 1024;

/// The control frame payload limit (RFC 6455 section 5.5).
const CONTROL_MAX: usize = 125;

/// Inflate output written per step.
const STEP: usize = 32 * 1024;

/// The frame being read: its head's fields and how much payload is still to come.
struct Frame {
    fin: bool,
    compressed: bool,
    opcode: u8,
    mask: Option<[u8; 4]>,
    head_len: u64,
    len: u64,
    read: u64,
}

/// A message being put together from its frames.
struct Building {
    opcode: u8,
    size: u64,
    wire_size: u64,
    frames: u32,
    compressed: bool,
    data: Vec<u8>,
    error: Option<String>,
}

impl Building {
    fn new(opcode: u8, compressed: bool) -> Self {
        Self {
            opcode,
            size: 0,
            wire_size: 0,
            frames: 0,
            compressed,
            data: Vec::new(),
            error: None,
        }
    }

    /// Counts `bytes` of payload and keeps what the budget allows.
    fn keep(&mut self, bytes: &[u8], budget: &mut usize) {
        self.size += bytes.len() as u64;
        let n = bytes.len().min(*budget);
        self.data.extend_from_slice(&bytes[..n]);
        *budget -= n;
    }

    fn into_message(self, direction: WsDirection, at_unix_ns: i64, complete: bool) -> WsMessage {
        WsMessage {
            direction,
            at_unix_ns,
            opcode: self.opcode,
            size: self.size,
            wire_size: self.wire_size,
            frames: self.frames,
            compressed: self.compressed,
            complete,
            data: self.data,
            error: self.error,
        }
    }
}

/// Reads one direction's frames into messages.
pub struct FrameReader {
    direction: WsDirection,
    inflater: Option<Decompress>,
    resets: bool,
    inflate_stopped: bool,
    head: Vec<u8>,
    frame: Option<Frame>,
    message: Option<Building>,
    control: Option<Building>,
    done: Vec<WsMessage>,
    /// Messages listed so far, taken or not.
    listed: usize,
    not_listed: u64,
    budget: usize,
    scratch: Vec<u8>,
    out: Vec<u8>,
}

impl FrameReader {
    /// A reader keeping at most `budget` payload bytes, inflating with `deflate`'s terms.
    pub fn new(direction: WsDirection, deflate: Option<DeflateTerms>, budget: usize) -> Self {
        Self {
            direction,
            inflater: deflate.map(|_| Decompress::new(false)),
            resets: deflate.is_some_and(|terms| terms.resets(direction)),
            inflate_stopped: false,
            head: Vec::with_capacity(14),
            frame: None,
            message: None,
            control: None,
            done: Vec::new(),
            listed: 0,
            not_listed: 0,
            budget,
            scratch: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Reads the next bytes of the direction, which arrived at `now_unix_ns`.
    pub fn feed(&mut self, mut bytes: &[u8], now_unix_ns: i64) {
        while !bytes.is_empty() {
            if self.frame.is_none() {
                let used = self.read_head(bytes, now_unix_ns);
                bytes = &bytes[used..];
                if self.frame.is_none() {
                    return;
                }
            }
            let Some(frame) = self.frame.as_mut() else {
                return;
            };
            let left = frame.len - frame.read;
            let n = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len());
            let (payload, rest) = bytes.split_at(n);
            bytes = rest;
            self.payload(payload);
            if let Some(frame) = self.frame.as_ref()
                && frame.read == frame.len
            {
                self.end_frame(now_unix_ns);
            }
        }
    }

    /// The messages completed since the last call, in order (the socket still open): the reader
    /// keeps none of them, and counts them against its bound.
    pub fn take_done(&mut self) -> Vec<WsMessage> {
        std::mem::take(&mut self.done)
    }

    /// The direction read.
    pub fn direction(&self) -> WsDirection {
        self.direction
    }

    /// Messages beyond the listed bound so far.
    pub fn not_listed(&self) -> u64 {
        self.not_listed
    }

    /// The messages read and not taken, in order, and how many were not listed; a message the
    /// connection ended inside is listed as incomplete.
    pub fn finish(mut self, now_unix_ns: i64) -> (Vec<WsMessage>, u64) {
        for building in [self.control.take(), self.message.take()]
            .into_iter()
            .flatten()
        {
            let mut building = building;
            if let Some(frame) = &self.frame {
                building.wire_size += frame.head_len + frame.read;
            }
            let message = building.into_message(self.direction, now_unix_ns, false);
            self.push(message);
        }
        (self.done, self.not_listed)
    }

    fn push(&mut self, message: WsMessage) {
        if self.listed < MAX_LISTED {
            self.listed += 1;
            self.done.push(message);
        } else {
            self.not_listed += 1;
        }
    }

    /// Takes head bytes; returns how many it used. Sets `frame` once the head is whole.
    fn read_head(&mut self, bytes: &[u8], now_unix_ns: i64) -> usize {
        let mut used = 0;
        while used < bytes.len() {
            self.head.push(bytes[used]);
            used += 1;
            if let Some(frame) = parse_head(&self.head) {
                self.head.clear();
                self.start_frame(frame, now_unix_ns);
                break;
            }
        }
        used
    }

    fn start_frame(&mut self, frame: Frame, now_unix_ns: i64) {
        if is_control(frame.opcode) {
            self.control = Some(Building::new(frame.opcode, false));
        } else if frame.opcode != opcode::CONTINUATION || self.message.is_none() {
            // A new data message (an unexpected continuation starts one too, as it came).
            if let Some(unfinished) = self.message.take() {
                let message = unfinished.into_message(self.direction, now_unix_ns, false);
                self.push(message);
            }
            self.message = Some(Building::new(frame.opcode, frame.compressed));
        }
        self.frame = Some(frame);
    }

    fn payload(&mut self, payload: &[u8]) {
        let Some(frame) = self.frame.as_mut() else {
            return;
        };
        self.scratch.clear();
        self.scratch.extend_from_slice(payload);
        if let Some(mask) = frame.mask {
            let start = frame.read;
            for (i, byte) in self.scratch.iter_mut().enumerate() {
                *byte ^= mask[((start + i as u64) % 4) as usize];
            }
        }
        frame.read += payload.len() as u64;
        if is_control(frame.opcode) {
            if let Some(control) = self.control.as_mut() {
                let mut room = CONTROL_MAX.saturating_sub(control.data.len());
                control.keep(&self.scratch, &mut room);
            }
            return;
        }
        let Some(message) = self.message.as_mut() else {
            return;
        };
        if !message.compressed {
            message.keep(&self.scratch, &mut self.budget);
            return;
        }
        let scratch = std::mem::take(&mut self.scratch);
        self.inflate(&scratch);
        self.scratch = scratch;
    }

    /// Inflates `input` into the message being built, within the bounds.
    fn inflate(&mut self, input: &[u8]) {
        let Some(message) = self.message.as_mut() else {
            return;
        };
        let inflater = match self.inflater.as_mut() {
            Some(inflater) if !self.inflate_stopped => inflater,
            Some(_) => {
                message.error.get_or_insert_with(|| {
                    "not inflated: an earlier message went past the inflate limit".to_string()
                });
                return;
            }
            None => {
                message.error.get_or_insert_with(|| {
                    "compressed (RSV1) without permessage-deflate agreed: kept as sent".to_string()
                });
                message.keep(input, &mut self.budget);
                return;
            }
        };
        self.out.resize(STEP, 0);
        let mut input = input;
        loop {
            let (in_before, out_before) = (inflater.total_in(), inflater.total_out());
            let status = inflater.decompress(input, &mut self.out, FlushDecompress::Sync);
            let used = usize::try_from(inflater.total_in() - in_before).unwrap_or(input.len());
            let made = usize::try_from(inflater.total_out() - out_before).unwrap_or(0);
            input = &input[used.min(input.len())..];
            message.keep(&self.out[..made], &mut self.budget);
            match status {
                Err(error) => {
                    message.error = Some(format!("inflate failed: {error}"));
                    self.inflate_stopped = true;
                    return;
                }
                Ok(Status::StreamEnd) => {
                    // A final deflate block ends the sender's stream: the next starts afresh.
                    inflater.reset(false);
                    return;
                }
                Ok(_) => {}
            }
            if message.size > INFLATE_LIMIT {
                message.error = Some(format!(
                    "inflated past {} MiB: not read further",
                    INFLATE_LIMIT >> 20
                ));
                self.inflate_stopped = true;
                return;
            }
            if (input.is_empty() && made < self.out.len()) || (used == 0 && made == 0) {
                return;
            }
        }
    }

    fn end_frame(&mut self, now_unix_ns: i64) {
        let Some(frame) = self.frame.take() else {
            return;
        };
        let wire = frame.head_len + frame.len;
        if is_control(frame.opcode) {
            if let Some(mut control) = self.control.take() {
                control.wire_size += wire;
                control.frames += 1;
                let message = control.into_message(self.direction, now_unix_ns, true);
                self.push(message);
            }
            return;
        }
        if let Some(message) = self.message.as_mut() {
            message.wire_size += wire;
            message.frames += 1;
        }
        if !frame.fin {
            return;
        }
        if self.message.as_ref().is_some_and(|m| m.compressed) {
            // RFC 7692 7.2.2: the sender removed this tail of its flush; put it back.
            self.inflate(&[0x00, 0x00, 0xff, 0xff]);
            if self.resets
                && let Some(inflater) = self.inflater.as_mut()
            {
                inflater.reset(false);
            }
        }
        if let Some(message) = self.message.take() {
            let message = message.into_message(self.direction, now_unix_ns, true);
            self.push(message);
        }
    }
}

fn is_control(code: u8) -> bool {
    code & 0x08 != 0
}

/// A whole frame head, once `head` holds one.
fn parse_head(head: &[u8]) -> Option<Frame> {
    if head.len() < 2 {
        return None;
    }
    let masked = head[1] & 0x80 != 0;
    let (len, at) = match head[1] & 0x7f {
        126 => (
            u64::from(u16::from_be_bytes([*head.get(2)?, *head.get(3)?])),
            4,
        ),
        127 => {
            let bytes: [u8; 8] = head.get(2..10)?.try_into().ok()?;
            (u64::from_be_bytes(bytes) & (u64::MAX >> 1), 10)
        }
        short => (u64::from(short), 2),
    };
    let mask = if masked {
        let bytes: [u8; 4] = head.get(at..at + 4)?.try_into().ok()?;
        Some(bytes)
    } else {
        None
    };
    let head_len = (at + if masked { 4 } else { 0 }) as u64;
    (head.len() as u64 == head_len).then_some(Frame {
        fin: head[0] & 0x80 != 0,
        compressed: head[0] & 0x40 != 0,
        opcode: head[0] & 0x0f,
        mask,
        head_len,
        len,
        read: 0,
    })
}

#[cfg(test)]
#[path = "websocket_tests.rs"]
mod tests;
