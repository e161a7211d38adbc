//! The journal beside the database: every hop event is appended to it before anything else, so
//! what traffic carried survives a slow, locked or failing database and a killed process.
//!
//! One file per recording process, `<db>.tracer-journal.<id>`, locked (flock) while its process
//! lives. The writer tails it and empties it whenever it has caught up. A journal whose lock can
//! be taken belongs to a process that died: the next recorder on that database takes it in.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::journal_codec::{self, FRAME_HEADER};
use tracer_wire::hop::HopEvent;

/// What journal file names start with after the database's own file name.
const MARK: &str = ".tracer-journal.";

/// The appending side, shared by every connection task.
#[derive(Debug)]
pub(crate) struct Appender {
    path: PathBuf,
    inner: Mutex<AppendState>,
}

#[derive(Debug)]
struct AppendState {
    file: File,
    /// Bytes of whole frames in the file.
    len: u64,
    /// Bytes at the start of the file whose disk space was given back (a hole).
    released: u64,
}

/// Bytes of body pieces a batch takes at most (past the first piece): big bodies reach SQLite a
/// few pieces at a time, so the writer never holds much of one.
const MAX_PIECE_BYTES: usize = 1024 * 1024;

/// Consumed bytes that are given back to the disk at once, at least.
const RELEASE_STEP: u64 = 8 * 1024 * 1024;

impl Appender {
    /// Creates this process's journal beside `db` and locks it.
    pub(crate) fn create(db: &Path) -> std::io::Result<Appender> {
        let path = journal_path(db, &tracer_wire::ids::random_hex_id(6));
        let file = OpenOptions::new()
            .create_new(true)
            .read(true)
            .append(true)
            .open(&path)?;
        file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::Error(e) => e,
            std::fs::TryLockError::WouldBlock => std::io::Error::other("journal is locked"),
        })?;
        Ok(Appender {
            path,
            inner: Mutex::new(AppendState {
                file,
                len: 0,
                released: 0,
            }),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event; on failure nothing of it stays in the file.
    pub(crate) fn append(&self, event: &HopEvent) -> std::io::Result<()> {
        let mut frame = Vec::with_capacity(256);
        journal_codec::encode(event, &mut frame);
        self.append_frame(&frame)
    }

    /// Appends one frame already encoded.
    pub(crate) fn append_frame(&self, frame: &[u8]) -> std::io::Result<()> {
        self.append_parts(frame, &[])
    }

    /// Appends one frame encoded in two parts (a head, then bytes borrowed from elsewhere).
    pub(crate) fn append_parts(&self, head: &[u8], rest: &[u8]) -> std::io::Result<()> {
        let mut state = self
            .inner
            .lock()
            .map_err(|_| std::io::Error::other("journal lock poisoned"))?;
        let written = state
            .file
            .write_all(head)
            .and_then(|()| state.file.write_all(rest));
        match written {
            Ok(()) => {
                state.len += (head.len() + rest.len()) as u64;
                Ok(())
            }
            Err(error) => {
                // Cut off a torn frame so the next one starts where a reader expects it.
                let len = state.len;
                state.file.set_len(len)?;
                Err(error)
            }
        }
    }

    /// Bytes of whole frames written so far.
    pub(crate) fn written(&self) -> u64 {
        self.inner.lock().map_or(0, |state| state.len)
    }

    /// Empties the file when the reader has consumed all of it (`consumed` bytes); true if so.
    pub(crate) fn truncate_if_consumed(&self, consumed: u64) -> bool {
        let Ok(mut state) = self.inner.lock() else {
            return false;
        };
        if state.len != consumed || consumed == 0 {
            return false;
        }
        match state.file.set_len(0) {
            Ok(()) => {
                state.len = 0;
                state.released = 0;
                true
            }
            Err(_) => false,
        }
    }

    /// Gives the disk space of the first `consumed` bytes back (a hole; offsets stay), so a
    /// journal the writer never quite catches up with under sustained load holds only its
    /// backlog on disk. Errors when the file system cannot punch holes.
    pub(crate) fn release_consumed(&self, consumed: u64) -> std::io::Result<()> {
        use nix::fcntl::{FallocateFlags, fallocate};
        let mut state = self
            .inner
            .lock()
            .map_err(|_| std::io::Error::other("journal lock poisoned"))?;
        if consumed < state.released + RELEASE_STEP || consumed > state.len {
            return Ok(());
        }
        let (from, len) = (state.released, consumed - state.released);
        let as_off = |n: u64| i64::try_from(n).map_err(std::io::Error::other);
        fallocate(
            &state.file,
            FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
            as_off(from)?,
            as_off(len)?,
        )
        .map_err(std::io::Error::from)?;
        state.released = consumed;
        Ok(())
    }

    /// Removes the file (everything in it is in the database).
    pub(crate) fn remove(&self) -> std::io::Result<()> {
        std::fs::remove_file(&self.path)
    }
}

/// The name of a journal of `db`.
fn journal_path(db: &Path, id: &str) -> PathBuf {
    let name = db.file_name().map_or_else(
        || "tracer.db".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    db.with_file_name(format!("{name}{MARK}{id}"))
}

/// Journals of `db` left by processes that are gone, each opened and locked by us.
pub(crate) fn orphans(db: &Path) -> Vec<(PathBuf, File)> {
    let Some(name) = db.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let prefix = format!("{name}{MARK}");
    let dir = match db.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => dir.to_path_buf(),
        None => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, File)> = entries
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .filter_map(|entry| {
            let path = entry.path();
            let file = OpenOptions::new().read(true).write(true).open(&path).ok()?;
            file.try_lock().ok()?;
            Some((path, file))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

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
        let mut header = [0u8; FRAME_HEADER];
        while at + FRAME_HEADER as u64 <= limit
            && events.len() < max_events
            && piece_bytes < MAX_PIECE_BYTES
        {
            self.file.read_exact_at(&mut header, at)?;
            let len = u32::from_le_bytes(header) as usize;
            let frame_end = at + (FRAME_HEADER + len) as u64;
            if frame_end > limit || (read > 0 && read + len > max_bytes) {
                break;
            }
            let mut payload = vec![0u8; len];
            self.file
                .read_exact_at(&mut payload, at + FRAME_HEADER as u64)?;
            match journal_codec::decode(&payload) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_batch_takes_about_a_mebibyte_of_body_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Appender::create(&dir.path().join("t.db")).unwrap();
        let piece = vec![7u8; 300 * 1024];
        for seq in 0..10 {
            let event = HopEvent::BodyPiece(Box::new(tracer_wire::hop::BodyPiece {
                id: "h".into(),
                side: tracer_wire::hop::BodySide::Request,
                seq,
                bytes: piece.clone(),
            }));
            journal.append(&event).unwrap();
        }
        let reader = JournalReader::open(journal.path()).unwrap();
        let batch = reader.read(journal.written(), 64 << 20, 4096).unwrap();
        assert_eq!(
            batch.events.len(),
            4,
            "1 MiB of pieces, then the one that passes it"
        );
    }

    #[test]
    fn consumed_bytes_give_their_disk_space_back() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Appender::create(&dir.path().join("t.db")).unwrap();
        let line = tracer_wire::hop::ServerLogLine {
            route: "r".into(),
            logged_unix_ns: 1,
            line: "x".repeat(64 * 1024),
        };
        for _ in 0..300 {
            journal
                .append(&HopEvent::ServerLog(Box::new(line.clone())))
                .unwrap();
        }
        let written = journal.written();
        let blocks = |p: &Path| std::fs::metadata(p).unwrap().blocks();
        let before = blocks(journal.path());
        if let Err(error) = journal.release_consumed(written - 1024 * 1024) {
            eprintln!("skipped: this file system cannot punch holes ({error})");
            return;
        }
        let after = blocks(journal.path());
        assert!(after * 2 < before, "{before} blocks, then {after}");
        // Offsets stay: the tail is still read where it was.
        let reader = JournalReader::open(journal.path()).unwrap();
        let mut reader = reader;
        reader.pos = written - 3 * (written / 300);
        let batch = reader.read(written, usize::MAX, 100).unwrap();
        assert_eq!(batch.events.len(), 3);
        assert_eq!(batch.end, written);
    }
}
