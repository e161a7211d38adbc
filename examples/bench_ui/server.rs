//! `tracer --db DB ui --listen 127.0.0.1:PORT` as a child: its URL (the first stderr line), its
//! RSS sampled every 50 ms while the page is driven, VmHWM at the end.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// A `/proc/PID/status` field in KiB (VmRSS, VmHWM).
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub struct Ui {
    child: Child,
    pub url: String,
    /// From the spawn to the URL line.
    pub started_in: Duration,
    /// VmRSS once the URL was printed.
    pub start_kib: u64,
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<()>>,
}

/// The server's memory over a run.
pub struct Memory {
    pub start_kib: u64,
    /// The highest VmRSS sampled.
    pub sampled_peak_kib: u64,
    /// VmHWM at the end (the kernel's peak).
    pub hwm_kib: u64,
}

impl Ui {
    pub fn start(tracer: &Path, db: &Path) -> Result<Ui> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let started = Instant::now();
        let mut child = Command::new(tracer)
            .arg("--db")
            .arg(db)
            .args(["ui", "--listen", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", tracer.display()))?;
        let mut stderr = BufReader::new(child.stderr.take().context("stderr")?);
        let mut first = String::new();
        stderr.read_line(&mut first)?;
        let Some(url) = first.trim().strip_prefix("tracer ui: ") else {
            let _ = child.kill();
            bail!("tracer ui said {first:?}, not its URL");
        };
        let url = url.to_string();
        let started_in = started.elapsed();
        // The rest of its stderr (warnings) passed on, so the pipe never fills.
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                eprintln!("  (the server) {line}");
            }
        });
        let pid = child.id();
        let start_kib = status_kib(pid, "VmRSS:").unwrap_or(0);
        let peak = Arc::new(AtomicU64::new(start_kib));
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (peak, stop) = (peak.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some(kib) = status_kib(pid, "VmRSS:") else {
                        break;
                    };
                    peak.fetch_max(kib, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };
        Ok(Ui {
            child,
            url,
            started_in,
            start_kib,
            peak,
            stop,
            sampler: Some(sampler),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server like Ctrl-C and says what memory it took.
    pub fn finish(mut self) -> Result<Memory> {
        let pid = self.child.id();
        let hwm_kib = status_kib(pid, "VmHWM:").unwrap_or(0);
        self.stop.store(true, Ordering::Relaxed);
        if let Some(sampler) = self.sampler.take() {
            let _ = sampler.join();
        }
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGINT,
        );
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.child.try_wait()?.is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Memory {
            start_kib: self.start_kib,
            sampled_peak_kib: self.peak.load(Ordering::Relaxed),
            hwm_kib,
        })
    }
}

impl Drop for Ui {
    /// A server left running by an error is killed.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
