//! The notes file: the only file the notes server touches. Every change is serialized behind one
//! lock and written atomically (temp file in the same folder, fsync, rename), with a size cap.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::AsyncWriteExt;
use tokio::sync::Mutex;

/// Why a notes operation failed; every message is written for the model that called the tool.
#[derive(Debug, thiserror::Error)]
pub enum NotesError {
    #[error("could not {action} the notes file {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the notes file would grow to {size} bytes, over the limit of {limit} bytes; nothing was written"
    )]
    TooLarge { size: u64, limit: u64 },
    #[error(
        "text not found in the notes: {search:?}; nothing was changed (call read to see the notes)"
    )]
    SearchNotFound { search: String },
    #[error("the notes file is not UTF-8 text; it was left unchanged")]
    NotText,
    #[error("cannot open the notes file {}: {reason}", path.display())]
    Unusable { path: PathBuf, reason: String },
}

/// What a change did, for the confirmation the tool sends back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Change {
    /// Size of the file after the change, in bytes.
    pub bytes: u64,
    /// Number of lines after the change.
    pub lines: usize,
    /// How many occurrences were replaced (update only; 0 otherwise).
    pub replaced: usize,
}

/// The notes file and the lock that serializes every access to it.
#[derive(Debug)]
pub(crate) struct NotesFile {
    path: PathBuf,
    max_bytes: u64,
    lock: Mutex<()>,
    temp_counter: AtomicU64,
}

impl NotesFile {
    /// Opens (creating the folder and an empty file if missing) the notes file at `path`, and
    /// removes temp files that a killed notes-server left beside it.
    pub(crate) async fn open(path: impl Into<PathBuf>, max_bytes: u64) -> Result<Self, NotesError> {
        let path = path.into();
        let unusable = |reason: String| NotesError::Unusable {
            path: path.clone(),
            reason,
        };
        if tokio::fs::metadata(&path).await.is_ok_and(|m| m.is_dir()) {
            return Err(unusable("it is a directory".into()));
        }
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if let Some(file) = folder.ancestors().find(|a| a.is_file()) {
                return Err(unusable(format!(
                    "{} is a file, not a folder",
                    file.display()
                )));
            }
            tokio::fs::create_dir_all(folder)
                .await
                .map_err(|e| unusable(format!("cannot create its folder: {e}")))?;
        }
        tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .await
            .map_err(|e| unusable(e.to_string()))?;
        remove_stale_temp_files(&path).await;
        Ok(NotesFile {
            path,
            max_bytes,
            lock: Mutex::new(()),
            temp_counter: AtomicU64::new(0),
        })
    }

    /// The whole file, as text (invalid UTF-8 is shown with replacement characters).
    pub(crate) async fn read(&self) -> Result<String, NotesError> {
        let _guard = self.lock.lock().await;
        let bytes = self.read_bytes().await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Replaces the whole file with `content`.
    pub(crate) async fn write(&self, content: &str) -> Result<Change, NotesError> {
        self.modify(|_| Ok((content.to_owned(), 0))).await
    }

    /// Adds `content` as a new line at the end (a missing final newline is added first).
    pub(crate) async fn append(&self, content: &str) -> Result<Change, NotesError> {
        self.modify(|mut text| {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(content);
            if !content.ends_with('\n') {
                text.push('\n');
            }
            Ok((text, 0))
        })
        .await
    }

    /// Replaces every occurrence of `search` with `replace`; a search that is not found is an error.
    pub(crate) async fn update(&self, search: &str, replace: &str) -> Result<Change, NotesError> {
        self.modify(|text| {
            let count = text.matches(search).count();
            if count == 0 {
                return Err(NotesError::SearchNotFound {
                    search: search.to_owned(),
                });
            }
            Ok((text.replace(search, replace), count))
        })
        .await
    }

    /// Empties the file.
    pub(crate) async fn clear(&self) -> Result<Change, NotesError> {
        self.modify(|_| Ok((String::new(), 0))).await
    }

    /// Reads, transforms and atomically replaces the file, all under the lock.
    async fn modify(
        &self,
        transform: impl FnOnce(String) -> Result<(String, usize), NotesError>,
    ) -> Result<Change, NotesError> {
        let _guard = self.lock.lock().await;
        let current =
            String::from_utf8(self.read_bytes().await?).map_err(|_| NotesError::NotText)?;
        let (next, replaced) = transform(current)?;
        let size = next.len() as u64;
        if size > self.max_bytes {
            return Err(NotesError::TooLarge {
                size,
                limit: self.max_bytes,
            });
        }
        self.replace_atomically(next.as_bytes()).await?;
        Ok(Change {
            bytes: size,
            lines: next.lines().count(),
            replaced,
        })
    }

    async fn read_bytes(&self) -> Result<Vec<u8>, NotesError> {
        match tokio::fs::read(&self.path).await {
            Ok(bytes) => Ok(bytes),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(source) => Err(NotesError::Io {
                action: "read",
                path: self.path.clone(),
                source,
            }),
        }
    }

    fn temp_path(&self) -> PathBuf {
        let serial = self.temp_counter.fetch_add(1, Ordering::Relaxed);
        let temp_name = format!(
            "{}{}.{serial}.tmp",
            temp_prefix(&self.path),
            std::process::id()
        );
        self.path.with_file_name(temp_name)
    }

    async fn replace_atomically(&self, bytes: &[u8]) -> Result<(), NotesError> {
        let temp = self.temp_path();
        let result = self.write_then_rename(&temp, bytes).await;
        if result.is_err() {
            let _ = tokio::fs::remove_file(&temp).await;
        }
        result
    }

    async fn write_then_rename(&self, temp: &Path, bytes: &[u8]) -> Result<(), NotesError> {
        let io_error = |action| {
            let path = self.path.clone();
            move |source| NotesError::Io {
                action,
                path,
                source,
            }
        };
        let mut file = tokio::fs::File::create(temp)
            .await
            .map_err(io_error("write"))?;
        file.write_all(bytes).await.map_err(io_error("write"))?;
        file.sync_all().await.map_err(io_error("write"))?;
        drop(file);
        if let Ok(metadata) = tokio::fs::metadata(&self.path).await {
            tokio::fs::set_permissions(temp, metadata.permissions())
                .await
                .map_err(io_error("write"))?;
        }
        tokio::fs::rename(temp, &self.path)
            .await
            .map_err(io_error("replace"))
    }
}

/// Temp files of `path` are named `.{file name}.{pid}.{serial}.tmp`; this is the part before
/// the pid.
fn temp_prefix(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    format!(".{}.", name.unwrap_or_default())
}

/// Removes the temp files beside `path` whose writing process is gone (killed mid-write).
async fn remove_stale_temp_files(path: &Path) {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let prefix = temp_prefix(path);
    let Ok(mut entries) = tokio::fs::read_dir(&folder).await else {
        return;
    };
    while let Ok(Some(entry)) = entries.next_entry().await {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|rest| rest.split('.').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
        if !alive || pid == std::process::id() as i32 {
            match tokio::fs::remove_file(entry.path()).await {
                Ok(()) => {
                    tracing::info!(file = %entry.path().display(), "removed a stale temp file")
                }
                Err(error) => {
                    tracing::warn!(file = %entry.path().display(), %error, "cannot remove a stale temp file")
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    async fn notes(max_bytes: u64) -> (tempfile::TempDir, NotesFile) {
        let dir = tempfile::tempdir().unwrap();
        let file = NotesFile::open(dir.path().join("data/db"), max_bytes)
            .await
            .unwrap();
        (dir, file)
    }

    #[tokio::test]
    async fn open_creates_folder_and_empty_file() {
        let (dir, file) = notes(100).await;
        assert!(dir.path().join("data/db").is_file());
        assert_eq!(file.read().await.unwrap(), "");
    }

    #[tokio::test]
    async fn append_adds_lines_and_fixes_a_missing_newline() {
        let (_dir, file) = notes(1000).await;
        file.write("first").await.unwrap();
        let change = file.append("buy milk").await.unwrap();
        assert_eq!(file.read().await.unwrap(), "first\nbuy milk\n");
        assert_eq!(change.lines, 2);
        file.append("eggs\n").await.unwrap();
        assert_eq!(file.read().await.unwrap(), "first\nbuy milk\neggs\n");
    }

    #[tokio::test]
    async fn update_replaces_every_occurrence_or_fails() {
        let (_dir, file) = notes(1000).await;
        file.write("milk, milk, bread").await.unwrap();
        assert_eq!(file.update("milk", "oat milk").await.unwrap().replaced, 2);
        assert_eq!(file.read().await.unwrap(), "oat milk, oat milk, bread");
        let error = file.update("cheese", "x").await.unwrap_err();
        assert!(matches!(error, NotesError::SearchNotFound { .. }));
        assert_eq!(file.read().await.unwrap(), "oat milk, oat milk, bread");
    }

    #[tokio::test]
    async fn growth_past_the_limit_is_refused_and_leaves_the_file() {
        let (_dir, file) = notes(10).await;
        file.write("0123456789").await.unwrap();
        let error = file.append("x").await.unwrap_err();
        assert!(
            matches!(
                error,
                NotesError::TooLarge {
                    size: 13,
                    limit: 10
                }
            ),
            "{error}"
        );
        assert_eq!(file.read().await.unwrap(), "0123456789");
        file.clear().await.unwrap();
        assert_eq!(file.read().await.unwrap(), "");
    }

    #[tokio::test]
    async fn no_temp_files_are_left_behind() {
        let (dir, file) = notes(1000).await;
        for line in ["a", "b", "c"] {
            file.append(line).await.unwrap();
        }
        let names: Vec<_> = std::fs::read_dir(dir.path().join("data"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["db".to_owned()]);
    }

    #[tokio::test]
    async fn non_utf8_file_is_read_lossily_and_never_rewritten() {
        let (dir, file) = notes(1000).await;
        std::fs::write(dir.path().join("data/db"), b"ok\xff").unwrap();
        assert_eq!(file.read().await.unwrap(), "ok\u{fffd}");
        assert!(matches!(
            file.append("x").await.unwrap_err(),
            NotesError::NotText
        ));
        assert_eq!(
            std::fs::read(dir.path().join("data/db")).unwrap(),
            b"ok\xff"
        );
    }
}
