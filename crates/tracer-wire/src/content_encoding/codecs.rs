//! The four decoders, each writing at most `limit` bytes in steps of [`STEP`]: gzip and deflate
//! on flate2's `Decompress` (miniz_oxide), br on brotli-decompressor's stream API, zstd on
//! ruzstd's frame decoder.

use brotli_decompressor::{BrotliDecompressStream, BrotliResult, BrotliState, StandardAlloc};
use flate2::{Decompress, FlushDecompress, Status};
use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

use super::{Coding, Decoded, Decoding, STEP, ZSTD_MAX_WINDOW};

pub(super) fn decode_one(coding: Coding, input: &[u8], limit: usize) -> Decoded {
    let mut out = Output::new(limit);
    let decoding = match coding {
        Coding::Gzip => gzip(input, &mut out),
        Coding::Deflate => deflate(input, &mut out),
        Coding::Brotli => brotli(input, &mut out),
        Coding::Zstd => zstd(input, &mut out),
    };
    Decoded {
        bytes: out.bytes,
        decoding,
    }
}

/// Decoded bytes, never more than the limit, and one step's scratch space.
struct Output {
    bytes: Vec<u8>,
    limit: usize,
    scratch: Vec<u8>,
}

impl Output {
    fn new(limit: usize) -> Self {
        Output {
            bytes: Vec::new(),
            limit,
            scratch: vec![0; STEP],
        }
    }

    /// How many bytes the next step may write: at least 1, so a body of exactly `limit` bytes
    /// can still be seen to end.
    fn step(&self) -> usize {
        self.limit.saturating_sub(self.bytes.len()).clamp(1, STEP)
    }

    /// Keeps the first `written` scratch bytes; false when they go past the limit (the rest is
    /// dropped).
    fn keep(&mut self, written: usize) -> bool {
        let room = self.limit.saturating_sub(self.bytes.len());
        self.bytes
            .extend_from_slice(&self.scratch[..written.min(room)]);
        written <= room
    }
}

/// Raw deflate, or zlib with `zlib`, from the start of `input`; returns how it stopped and the
/// input bytes the stream took.
fn inflate(input: &[u8], zlib: bool, out: &mut Output) -> (Decoding, usize) {
    let mut state = Decompress::new(zlib);
    loop {
        let used = usize::try_from(state.total_in()).unwrap_or(input.len());
        let before_out = state.total_out();
        let step = out.step();
        let status = state.decompress(
            &input[used.min(input.len())..],
            &mut out.scratch[..step],
            FlushDecompress::None,
        );
        let taken = usize::try_from(state.total_in()).unwrap_or(input.len());
        let written = usize::try_from(state.total_out() - before_out).unwrap_or(step);
        if !out.keep(written) {
            return (Decoding::AtLimit, taken);
        }
        match status {
            Ok(Status::StreamEnd) => return (Decoding::Whole, taken),
            Ok(_) if written == 0 && taken == used => {
                let stop = if taken >= input.len() {
                    Decoding::Ended
                } else {
                    Decoding::Corrupt("the deflate stream makes no progress".into())
                };
                return (stop, taken);
            }
            Ok(_) => {}
            Err(error) => return (Decoding::Corrupt(error.to_string()), taken),
        }
    }
}

/// HTTP's `deflate` is zlib (RFC 9110); some servers send raw deflate, which is read too.
fn deflate(input: &[u8], out: &mut Output) -> Decoding {
    let zlib = input.len() >= 2
        && input[0] & 0x0f == 8
        && (u16::from(input[0]) << 8 | u16::from(input[1])) % 31 == 0;
    inflate(input, zlib, out).0
}

/// gzip members one after another (RFC 1952); bytes after the last member are ignored.
fn gzip(input: &[u8], out: &mut Output) -> Decoding {
    let mut at = 0;
    loop {
        let body = match gzip_header(&input[at..]) {
            Ok(len) => at + len,
            Err(stop) => return stop,
        };
        let (stop, taken) = inflate(&input[body..], false, out);
        if stop != Decoding::Whole {
            return stop;
        }
        // The trailer: CRC-32 and length, not checked (this copy is for reading).
        at = body + taken + 8;
        if at > input.len() {
            return Decoding::Ended;
        }
        if input.len() - at < 2 || input[at..at + 2] != [0x1f, 0x8b] {
            return Decoding::Whole;
        }
    }
}

/// The length of the gzip member header at the start of `input`.
fn gzip_header(input: &[u8]) -> Result<usize, Decoding> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let ended = || Decoding::Ended;
    if input.len() < 10 {
        return if [0x1f, 0x8b, 8].starts_with(&input[..input.len().min(3)]) {
            Err(ended())
        } else {
            Err(Decoding::Corrupt("not a gzip stream".into()))
        };
    }
    if input[..3] != [0x1f, 0x8b, 8] {
        return Err(Decoding::Corrupt("not a gzip stream".into()));
    }
    let flags = input[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let len = input.get(at..at + 2).ok_or_else(ended)?;
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let rest = input.get(at..).ok_or_else(ended)?;
            at += rest.iter().position(|b| *b == 0).ok_or_else(ended)? + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    if at > input.len() {
        return Err(ended());
    }
    Ok(at)
}

fn brotli(input: &[u8], out: &mut Output) -> Decoding {
    let mut state = BrotliState::new(
        StandardAlloc::default(),
        StandardAlloc::default(),
        StandardAlloc::default(),
    );
    let mut available_in = input.len();
    let mut input_offset = 0;
    let mut total_out = 0;
    loop {
        let step = out.step();
        let mut available_out = step;
        let mut output_offset = 0;
        let result = BrotliDecompressStream(
            &mut available_in,
            &mut input_offset,
            input,
            &mut available_out,
            &mut output_offset,
            &mut out.scratch[..step],
            &mut total_out,
            &mut state,
        );
        if !out.keep(output_offset) {
            return Decoding::AtLimit;
        }
        match result {
            BrotliResult::ResultSuccess => return Decoding::Whole,
            BrotliResult::NeedsMoreOutput => {}
            // Decoded bytes may still wait in the window: drained until none come.
            BrotliResult::NeedsMoreInput if output_offset > 0 => {}
            BrotliResult::NeedsMoreInput => return Decoding::Ended,
            BrotliResult::ResultFailure => {
                return Decoding::Corrupt(format!("invalid brotli data ({:?})", state.error_code));
            }
        }
    }
}

/// zstd frames one after another (skippable frames skipped).
fn zstd(input: &[u8], out: &mut Output) -> Decoding {
    let mut frame = FrameDecoder::new();
    frame.set_max_window_size(ZSTD_MAX_WINDOW);
    let mut at = 0;
    while at < input.len() {
        match zstd_frame(&mut frame, &input[at..], out) {
            Ok(taken) => at += taken.max(1),
            Err(stop) => return stop,
        }
    }
    Decoding::Whole
}

/// Decodes one frame from the start of `input`; the input bytes it took, or how it stopped.
fn zstd_frame(frame: &mut FrameDecoder, input: &[u8], out: &mut Output) -> Result<usize, Decoding> {
    let mut source = input;
    match frame.reset(&mut source) {
        Ok(()) => {}
        Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
            length,
            ..
        })) => {
            let header = input.len() - source.len();
            return Ok(header.saturating_add(usize::try_from(length).unwrap_or(usize::MAX)));
        }
        Err(_) if source.is_empty() => return Err(Decoding::Ended),
        Err(error) => return Err(Decoding::Corrupt(error.to_string())),
    }
    let frame_start = out.bytes.len();
    match frame_blocks(frame, &mut source, out) {
        Ok(()) => Ok(input.len() - source.len()),
        Err((Decoding::Ended, whole)) => Err(cut_frame_tail(&input[..whole], frame_start, out)),
        Err((stop, _)) => Err(stop),
    }
}

/// Decodes the blocks of a frame, one at a time, collecting as it goes; on a stop, also how
/// many bytes of the frame its whole blocks took.
fn frame_blocks(
    frame: &mut FrameDecoder,
    source: &mut &[u8],
    out: &mut Output,
) -> Result<(), (Decoding, usize)> {
    let mut whole = usize::try_from(frame.bytes_read_from_source()).unwrap_or(0);
    loop {
        let decoded = frame.decode_blocks(&mut *source, BlockDecodingStrategy::UptoBlocks(1));
        if !drain(frame, out) {
            return Err((Decoding::AtLimit, whole));
        }
        match decoded {
            Ok(true) => return Ok(()),
            Ok(false) => whole = usize::try_from(frame.bytes_read_from_source()).unwrap_or(0),
            Err(_) if source.is_empty() => return Err((Decoding::Ended, whole)),
            Err(error) => return Err((Decoding::Corrupt(error.to_string()), whole)),
        }
    }
}

/// Collects what the frame decoder holds beyond its window; false past the limit.
fn drain(frame: &mut FrameDecoder, out: &mut Output) -> bool {
    use std::io::Read;
    loop {
        let step = out.step();
        let Ok(written) = frame.read(&mut out.scratch[..step]) else {
            return true;
        };
        if written == 0 {
            return true;
        }
        if !out.keep(written) {
            return false;
        }
    }
}

/// A frame cut mid-way keeps its last window of decoded bytes inside the decoder; to read them,
/// the frame's whole blocks (`whole_blocks`) are decoded again, closed by an empty last block,
/// and replace what `out` has of this frame (from `frame_start`) when they give more.
fn cut_frame_tail(whole_blocks: &[u8], frame_start: usize, out: &mut Output) -> Decoding {
    /// A raw block of no bytes, marked last; then room for a checksum the frame may announce.
    const CLOSING: [u8; 7] = [1, 0, 0, 0, 0, 0, 0];
    let mut closed = whole_blocks.to_vec();
    closed.extend_from_slice(&CLOSING);
    let mut again = Output::new(out.limit - frame_start);
    let mut frame = FrameDecoder::new();
    frame.set_max_window_size(ZSTD_MAX_WINDOW);
    let mut source = closed.as_slice();
    if frame.reset(&mut source).is_err() {
        return Decoding::Ended;
    }
    let stop = match frame_blocks(&mut frame, &mut source, &mut again) {
        Err((Decoding::AtLimit, _)) => Decoding::AtLimit,
        _ => Decoding::Ended,
    };
    if again.bytes.len() > out.bytes.len() - frame_start {
        out.bytes.truncate(frame_start);
        out.bytes.extend_from_slice(&again.bytes);
    }
    stop
}
