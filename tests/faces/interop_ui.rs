//! Interop: the `tracer ui` page in a real headless Chromium, driven by Playwright
//! (tests/interop/ui_browser.py, from .venv; the system Chromium, no browser download). Over a
//! real server: the list and a trace read as `ls --json` and `show --json` print them, a deep
//! link, body search, hostile content shown as text (no dialog, no policy violation, no request
//! off the server's origin), a trace recorded while the page is open, the page reconnecting to
//! a restarted server, a `proxy --ui` page showing an answer while it streams, and screenshots
//! (written to docs/ui-*.png when TRACER_UPDATE_SCREENSHOT=1). One Chromium at a time.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::interop_chromium::chromium;
use crate::sample_db::TRACER;

/// One browser at a time: the tests of this file take turns.
pub(crate) static BROWSER: Mutex<()> = Mutex::new(());

/// How long one run of the script may take.
pub(crate) const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

/// The Python with Playwright and the Chromium it drives, or None after saying why.
pub(crate) struct Peers {
    pub(crate) python: PathBuf,
    pub(crate) chromium: PathBuf,
    pub(crate) _turn: MutexGuard<'static, ()>,
}

pub(crate) fn peers() -> Option<Peers> {
    let python = crate::interop_peers::venv_python(".venv", "playwright", "playwright")?;
    let chromium = chromium()?;
    Some(Peers {
        python,
        chromium,
        _turn: BROWSER.lock().unwrap_or_else(PoisonError::into_inner),
    })
}

/// A running `tracer` whose stderr said its UI's URL; killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `tracer --db DB ARGS` and waits for its `tracer ui: URL` line on stderr (the rest of
/// stderr is read and dropped).
pub(crate) fn serve(db: &Path, args: &[String]) -> Server {
    let mut child = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(args)
        .env("RUST_LOG", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.strip_prefix("tracer ui: ") {
                    break url.to_string();
                }
                said.push_str(&line);
                said.push('\n');
            }
            _ => {
                let _ = child.kill();
                panic!("tracer {args:?} said no URL: {said}");
            }
        }
    };
    std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
    Server { child, url }
}

pub(crate) fn ui(db: &Path, port: u16) -> Server {
    let server = serve(
        db,
        &["ui".into(), "--listen".into(), format!("127.0.0.1:{port}")],
    );
    assert_eq!(server.url, format!("http://127.0.0.1:{port}/"));
    server
}

/// A run of ui_browser.py: its stdout lines as they come, its stdin for the interactive ones.
pub(crate) struct Script {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) lines: mpsc::Receiver<String>,
    pub(crate) said: Vec<String>,
    pub(crate) stderr: Option<std::thread::JoinHandle<String>>,
    pub(crate) scenario: String,
    pub(crate) started: Instant,
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Script {
    pub(crate) fn start(peers: &Peers, url: &str, scenario: &str, args: &[&str]) -> Script {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/ui_browser.py");
        let mut child = Command::new(&peers.python)
            .arg(script)
            .args(["--url", url, "--scenario", scenario, "--tracer", TRACER])
            .arg("--chromium")
            .arg(&peers.chromium)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Script {
            child,
            stdin,
            lines,
            said: Vec::new(),
            stderr: Some(stderr),
            scenario: scenario.to_string(),
            started: Instant::now(),
        }
    }

    /// The next stdout line starting with `prefix` (what follows it), within `within`.
    pub(crate) fn expect(&mut self, prefix: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.said.push(line.clone());
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.trim().to_string();
                    }
                }
                Err(_) => panic!(
                    "{}: no `{prefix}` line within {within:?}: {:?}",
                    self.scenario, self.said
                ),
            }
        }
    }

    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for the script's end and returns its JSON result, which must say `ok`.
    pub(crate) fn finish(mut self) -> Value {
        self.stdin = None;
        let deadline = self.started + SCRIPT_DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.said.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{}: not done within {SCRIPT_DEADLINE:?}", self.scenario)
                }
            }
        }
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        let last = self.said.last().cloned().unwrap_or_default();
        let result: Value = serde_json::from_str(&last).unwrap_or_else(|e| {
            panic!(
                "{}: the last line is not JSON ({e}): {:?}\n{stderr}",
                self.scenario, self.said
            )
        });
        assert!(
            status.success() && result["ok"] == true,
            "{} failed: {result:#}\n{stderr}",
            self.scenario
        );
        assert_eq!(result["scenario"], self.scenario.as_str());
        eprintln!(
            "ui_browser.py {}: ok in {:.1} s",
            self.scenario,
            self.started.elapsed().as_secs_f64()
        );
        result
    }
}

pub(crate) fn run(peers: &Peers, url: &str, scenario: &str, args: &[&str]) -> Value {
    Script::start(peers, url, scenario, args).finish()
}

/// Nothing ran that the page did not write, nothing was fetched off its origin.
#[track_caller]
pub(crate) fn assert_clean(result: &Value) {
    for key in [
        "foreign_requests",
        "dialogs",
        "violations",
        "console_errors",
    ] {
        assert_eq!(result[key], Value::Array(vec![]), "{key}: {result:#}");
    }
    assert!(result["requests"].as_u64().unwrap() > 3, "{result:#}");
}

pub(crate) fn ids(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

pub(crate) fn cli_json(db: &Path, args: &[&str]) -> Value {
    let output = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A PNG's width and height.
pub(crate) fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    (
        u32::from_be_bytes(png[16..20].try_into().unwrap()),
        u32::from_be_bytes(png[20..24].try_into().unwrap()),
    )
}
