//! `tracer proxy` as a child process, an upstream for it, and the faults a test inflicts on the
//! database: a lock held by another connection, an immutable file, a file size limit.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

/// What `tracer proxy` said when it stopped.
#[derive(Debug)]
pub struct ExitLine {
    pub written: u64,
    pub not_written: u64,
    pub line: String,
    /// Everything the process wrote to stderr.
    pub stderr: String,
}

pub struct ProxyProcess {
    child: Child,
    pub addr: SocketAddr,
    /// Its stderr, read as it comes (a pipe left unread would block the process).
    stderr: tokio::task::JoinHandle<String>,
}

impl ProxyProcess {
    pub async fn start(db: &Path, upstream: SocketAddr) -> ProxyProcess {
        Self::start_with(db, upstream, &[]).await
    }

    /// The same, with more arguments for `tracer proxy` (e.g. `--max-body`).
    pub async fn start_with(db: &Path, upstream: SocketAddr, args: &[&str]) -> ProxyProcess {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
        command.arg("--db").arg(db);
        Self::spawn(command, upstream, args).await
    }

    /// The same, in a process that ignores SIGXFSZ, so a file size limit set on it later
    /// (`limit_file_size`) fails its writes with EFBIG, as a full disk fails them with ENOSPC.
    pub async fn start_limitable(db: &Path, upstream: SocketAddr) -> ProxyProcess {
        let mut command = Command::new("sh");
        command
            .args(["-c", "trap '' XFSZ; exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_tracer"))
            .arg("--db")
            .arg(db);
        Self::spawn(command, upstream, &[]).await
    }

    /// Sets the soft limit on the size of files the process writes (`None`: no limit), with
    /// util-linux's `prlimit`; false when that cannot be done here.
    pub fn limit_file_size(&self, bytes: Option<u64>) -> bool {
        let Some(pid) = self.child.id() else {
            return false;
        };
        let soft = bytes.map_or("unlimited".to_string(), |b| b.to_string());
        std::process::Command::new("prlimit")
            .arg(format!("--pid={pid}"))
            .arg(format!("--fsize={soft}:"))
            .status()
            .is_ok_and(|status| status.success())
    }

    async fn spawn(mut command: Command, upstream: SocketAddr, args: &[&str]) -> ProxyProcess {
        let mut child = command
            .arg("proxy")
            .arg("--route")
            .arg(format!("model:test=127.0.0.1:0=http://{upstream}"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                let mut words = line.split_whitespace();
                if words.next() == Some("test") {
                    return words.nth(1).unwrap().parse().unwrap();
                }
            }
            panic!("tracer proxy printed no route table")
        })
        .await
        .expect("tracer proxy started");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let mut pipe = child.stderr.take().unwrap();
        let stderr = tokio::spawn(async move {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text).await;
            text
        });
        ProxyProcess {
            child,
            addr,
            stderr,
        }
    }

    /// Stops it with SIGTERM and reads its exit line.
    pub async fn terminate(mut self) -> ExitLine {
        let pid = nix::unistd::Pid::from_raw(self.child.id().unwrap() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("tracer stopped within a minute")
            .unwrap();
        let stderr = self.stderr.await.unwrap();
        assert!(status.success(), "{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.starts_with("tracer: stopped after"))
            .unwrap_or_else(|| panic!("no exit line in {stderr}"))
            .to_string();
        let number_before = |word: &str| -> u64 {
            let at = line
                .find(word)
                .unwrap_or_else(|| panic!("{word} in {line}"));
            line[..at]
                .split_whitespace()
                .last()
                .unwrap()
                .trim_start_matches(';')
                .parse()
                .unwrap()
        };
        ExitLine {
            // `1 hop written`, `2 hops written`.
            written: number_before(" hop"),
            not_written: number_before(" not written"),
            line,
            stderr,
        }
    }

    /// SIGKILL: nothing of the process gets to run any more.
    pub fn kill(mut self) {
        self.child.start_kill().unwrap();
        let _ = futures_util::FutureExt::now_or_never(self.child.wait());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// An upstream answering every request with a small JSON body.
pub async fn upstream() -> SocketAddr {
    use http_body_util::{BodyExt, Full};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    |req: http::Request<hyper::body::Incoming>| async move {
                        let _ = req.into_body().collect().await;
                        Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(
                        bytes::Bytes::from_static(b"{\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"done\":true}"),
                    )))
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// The journals beside a database.
pub fn journals(db: &Path) -> Vec<PathBuf> {
    let name = db.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with(&format!("{name}.tracer-journal."))
            })
        })
        .collect()
}

/// Another connection holding the database's write lock.
pub struct HeldLock(sqlx::SqliteConnection);

pub async fn hold_exclusive_lock(db: &Path) -> HeldLock {
    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query("pragma busy_timeout = 30000")
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::query("begin exclusive")
        .execute(&mut conn)
        .await
        .unwrap();
    HeldLock(conn)
}

impl HeldLock {
    pub async fn release(mut self) {
        sqlx::query("commit").execute(&mut self.0).await.unwrap();
    }
}

/// The database and its WAL made immutable (`chattr +i`) until dropped.
pub struct Immutable(Vec<PathBuf>);

impl Immutable {
    pub fn set(db: &Path) -> Option<Immutable> {
        let wal = PathBuf::from(format!("{}-wal", db.display()));
        let mut done = Immutable(Vec::new());
        for path in [db.to_path_buf(), wal] {
            if !chattr("+i", &path) {
                return None;
            }
            done.0.push(path);
        }
        Some(done)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        for path in &self.0 {
            chattr("-i", path);
        }
    }
}

fn chattr(flag: &str, path: &Path) -> bool {
    std::process::Command::new("chattr")
        .arg(flag)
        .arg(path)
        .output()
        .is_ok_and(|out| out.status.success())
}

/// A small tmpfs mounted for one test (root only); unmounted when dropped.
pub struct SmallDisk {
    pub dir: tempfile::TempDir,
}

impl SmallDisk {
    pub fn mount(megabytes: u32) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().ok()?;
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir.path())
            .output()
            .is_ok_and(|out| out.status.success());
        mounted.then_some(SmallDisk { dir })
    }

    /// Fills the disk with a file until no byte fits; returns its path.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.dir.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 64 * 1024];
        while file.write_all(&block).is_ok() {}
        let mut byte = [0u8; 1];
        while file.write_all(&byte[..]).is_ok() {
            byte[0] = 1;
        }
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .output();
    }
}
