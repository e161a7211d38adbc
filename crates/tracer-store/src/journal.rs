//! The journal beside the database: every hop event is appended to it before anything else, so
//! what traffic carried survives a slow, locked or failing database and a killed process.
//!
//! One file per recording process, `<db>.tracer-journal.<id>`, locked (flock) while its process
//! lives. The writer tails it and empties it whenever it has caught up. A journal whose lock can
//! be taken belongs to a process that died: the next recorder on that database takes it in.

use std::fs::{File, OpenOptions};
use std::io::{IoSlice, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::journal_codec;
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
    /// Frames held in memory (see [`Appender::hold`]), written ahead of the next frame that
    /// must be in the file.
    held: Vec<u8>,
    /// When the first held frame was held.
    held_since: Option<Instant>,
}

/// Held frames are written at once when they pass this many bytes.
const MAX_HELD: usize = 256 * 1024;

/// How long the writer lets frames stay held before it writes them itself.
pub(crate) const HOLD: Duration = Duration::from_millis(2);

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
                held: Vec::new(),
                held_since: None,
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

    /// Appends one frame encoded in two parts (a head, then bytes borrowed from elsewhere),
    /// after the frames held: one write for them all.
    pub(crate) fn append_parts(&self, head: &[u8], rest: &[u8]) -> std::io::Result<()> {
        self.state()?.write_out(&[head, rest])
    }

    /// Holds one event in memory instead of writing it: a hop's start or request, which the
    /// hop's end (or any other appended frame) carries into the file with it, in one write, or
    /// which the writer writes once they are [`HOLD`] old. So a hop answered at once costs one
    /// write, and a kill -9 can lose only what was held: hops whose end, and so whose answer's
    /// last bytes, had not gone out yet. True when it is the first frame held (the writer is
    /// told, to write it in time).
    pub(crate) fn hold(&self, event: &HopEvent) -> std::io::Result<bool> {
        self.hold_encoded(|frame| journal_codec::encode(event, frame))
    }

    /// [`Appender::hold`], the frame encoded by `encode` straight into the held bytes.
    pub(crate) fn hold_encoded(&self, encode: impl FnOnce(&mut Vec<u8>)) -> std::io::Result<bool> {
        let mut state = self.state()?;
        let before = state.held.len();
        encode(&mut state.held);
        let first = before == 0;
        if first {
            state.held_since = Some(Instant::now());
        }
        if state.held.len() >= MAX_HELD
            && let Err(error) = state.write_out(&[])
        {
            state.held.truncate(before);
            if first {
                state.held_since = None;
            }
            return Err(error);
        }
        Ok(first)
    }

    /// Writes the frames held, if any.
    pub(crate) fn write_held(&self) -> std::io::Result<()> {
        self.state()?.write_out(&[])
    }

    /// When the oldest frame held was held; None when none is.
    pub(crate) fn held_since(&self) -> Option<Instant> {
        self.inner.lock().ok().and_then(|state| state.held_since)
    }

    fn state(&self) -> std::io::Result<std::sync::MutexGuard<'_, AppendState>> {
        self.inner
            .lock()
            .map_err(|_| std::io::Error::other("journal lock poisoned"))
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

impl AppendState {
    /// Writes the held frames, then `parts`, with one `writev` (more only when it writes
    /// short); on failure the file is cut back to its whole frames and the held frames stay held.
    fn write_out(&mut self, parts: &[&[u8]]) -> std::io::Result<()> {
        let AppendState {
            file, held, len, ..
        } = self;
        let mut slices: Vec<IoSlice<'_>> = std::iter::once(held.as_slice())
            .chain(parts.iter().copied())
            .filter(|part| !part.is_empty())
            .map(IoSlice::new)
            .collect();
        let total: usize = slices.iter().map(|slice| slice.len()).sum();
        let mut rest = slices.as_mut_slice();
        let written = loop {
            if rest.is_empty() {
                break Ok(());
            }
            match file.write_vectored(rest) {
                Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => IoSlice::advance_slices(&mut rest, n),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => break Err(error),
            }
        };
        match written {
            Ok(()) => {
                *len += total as u64;
                held.clear();
                // A big request held once does not keep its room for the life of the process.
                held.shrink_to(MAX_HELD);
                self.held_since = None;
                Ok(())
            }
            Err(error) => {
                // Cut off a torn frame so the next one starts where a reader expects it.
                file.set_len(*len)?;
                Err(error)
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal_reader::JournalReader;
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

    fn log_line(text: &str) -> HopEvent {
        HopEvent::ServerLog(Box::new(tracer_wire::hop::ServerLogLine {
            route: "r".into(),
            logged_unix_ns: 1,
            line: text.into(),
        }))
    }

    fn lines_in(journal: &Appender) -> Vec<String> {
        let reader = JournalReader::open(journal.path()).unwrap();
        let batch = reader.read(journal.written(), usize::MAX, 100).unwrap();
        batch
            .events
            .into_iter()
            .map(|event| match event {
                HopEvent::ServerLog(line) => line.line,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn held_frames_reach_the_file_ahead_of_the_next_appended_one_or_when_written() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Appender::create(&dir.path().join("t.db")).unwrap();
        assert!(journal.hold(&log_line("start")).unwrap(), "the first held");
        assert!(!journal.hold(&log_line("request")).unwrap());
        assert!(journal.held_since().is_some());
        assert_eq!(journal.written(), 0, "held, not written");
        assert!(lines_in(&journal).is_empty());

        journal.append(&log_line("end")).unwrap();
        assert_eq!(lines_in(&journal), ["start", "request", "end"], "in order");
        assert!(journal.held_since().is_none());

        assert!(journal.hold(&log_line("a stream's start")).unwrap());
        journal.write_held().unwrap();
        assert_eq!(lines_in(&journal).len(), 4);
        assert!(journal.held_since().is_none());
        let before = journal.written();
        journal.write_held().unwrap();
        assert_eq!(journal.written(), before, "nothing held, nothing written");
    }

    #[test]
    fn held_frames_past_the_bound_are_written_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Appender::create(&dir.path().join("t.db")).unwrap();
        journal.hold(&log_line(&"x".repeat(MAX_HELD))).unwrap();
        assert!(journal.held_since().is_none());
        assert_eq!(lines_in(&journal).len(), 1);
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
