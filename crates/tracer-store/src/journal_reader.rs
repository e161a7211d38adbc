//! Reading a journal's whole frames from an offset, a block at a time: one `pread` brings in
//! many small frames (a hop's start and end are a few hundred bytes each), where a read per
//! frame header and payload cost six system calls a hop.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::journal_codec::{self, FRAME_HEADER};
use tracer_wire::hop::HopEvent;

/// Bytes of body pieces a batch takes at most (past the first piece): big bodies reach SQLite a
/// few pieces at a time, so the writer never holds much of one.
const MAX_PIECE_BYTES: usize = 1024 * 1024;

/// Bytes read at once when the next frame is not in the block already (a longer frame is read
/// whole, by itself).
const BLOCK_BYTES: usize = 256 * 1024;

/// Reads whole frames of a journal from an offset.
pub(crate) struct JournalReader {
    file: File,
    /// Bytes consumed (written to the database) so far.
    pub pos: u64,
}

/// Events read from a journal and the offset just after them.
pub(crate) struct ReadBatch {
    pub events: Vec<HopEvent>,
    pub end: u64,
    /// A frame could not be decoded: the rest of the file is unreadable from here.
    pub corrupt: Option<String>,
}

/// The bytes of the file from `start` that were read last.
struct Block {
    start: u64,
    bytes: Vec<u8>,
}

impl Block {
    /// `len` bytes of the file at `at` (never past `limit`), read into the block unless it
    /// holds them already.
    fn bytes(&mut self, file: &File, at: u64, len: usize, limit: u64) -> std::io::Result<&[u8]> {
        let end = at + len as u64;
        let held = at >= self.start && end <= self.start + self.bytes.len() as u64;
        if !held {
            let room = usize::try_from(limit.saturating_sub(at)).unwrap_or(usize::MAX);
            let want = len.max(BLOCK_BYTES).min(room.max(len));
            self.bytes.resize(want, 0);
            file.read_exact_at(&mut self.bytes, at)?;
            self.start = at;
        }
        let from = usize::try_from(at - self.start).map_err(std::io::Error::other)?;
        Ok(&self.bytes[from..from + len])
    }
}

impl JournalReader {
    pub(crate) fn open(path: &Path) -> std::io::Result<JournalReader> {
        Ok(JournalReader {
            file: File::open(path)?,
            pos: 0,
        })
    }

    pub(crate) fn from_file(file: File) -> JournalReader {
        JournalReader { file, pos: 0 }
    }

    /// Reads frames from `pos` up to `limit` (the file's whole-frame length), at most
    /// `max_bytes` (but always at least one frame) and `max_events`, and body pieces up to about
    /// `MAX_PIECE_BYTES`.
    pub(crate) fn read(
        &self,
        limit: u64,
        max_bytes: usize,
        max_events: usize,
    ) -> std::io::Result<ReadBatch> {
        let mut at = self.pos;
        let mut events = Vec::new();
        let mut read = 0usize;
        let mut piece_bytes = 0usize;
        let mut block = Block {
            start: at,
            bytes: Vec::new(),
        };
        while at + FRAME_HEADER as u64 <= limit
            && events.len() < max_events
            && piece_bytes < MAX_PIECE_BYTES
        {
            let mut header = [0u8; FRAME_HEADER];
            header.copy_from_slice(block.bytes(&self.file, at, FRAME_HEADER, limit)?);
            let len = u32::from_le_bytes(header) as usize;
            let frame_end = at + (FRAME_HEADER + len) as u64;
            if frame_end > limit || (read > 0 && read + len > max_bytes) {
                break;
            }
            let payload = block.bytes(&self.file, at + FRAME_HEADER as u64, len, limit)?;
            match journal_codec::decode(payload) {
                Ok(event) => {
                    if let HopEvent::BodyPiece(piece) = &event {
                        piece_bytes += piece.bytes.len();
                    }
                    events.push(event)
                }
                Err(error) => {
                    return Ok(ReadBatch {
                        events,
                        end: at,
                        corrupt: Some(format!("frame at byte {at}: {error}")),
                    });
                }
            }
            read += len;
            at = frame_end;
        }
        Ok(ReadBatch {
            events,
            end: at,
            corrupt: None,
        })
    }

    /// Hops started in the frames from `pos` to `limit` (what is left when the writer stops).
    pub(crate) fn starts_left(&self, limit: u64) -> u64 {
        let mut at = self.pos;
        let mut starts = 0;
        let mut header = [0u8; FRAME_HEADER + 1];
        while at + header.len() as u64 <= limit {
            if self.file.read_exact_at(&mut header, at).is_err() {
                break;
            }
            let mut len_bytes = [0u8; FRAME_HEADER];
            len_bytes.copy_from_slice(&header[..FRAME_HEADER]);
            let len = u32::from_le_bytes(len_bytes) as u64;
            if journal_codec::is_start(&header[FRAME_HEADER..]) {
                starts += 1;
            }
            at += FRAME_HEADER as u64 + len;
        }
        starts
    }

    /// The file's length now (for an orphan: all of it is to be taken in).
    pub(crate) fn file_len(&self) -> u64 {
        self.file.metadata().map_or(0, |m| m.len())
    }
}
