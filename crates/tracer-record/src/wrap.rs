//! `tracer wrap`: runs a stdio MCP server as a child, passes stdin, stdout and stderr through
//! byte-exact as they arrive, and records the JSON-RPC it sees as hops in the shared database.
//!
//! Passing bytes through never waits on recording; without a database the wrapper still runs.

mod observer;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::Command;

use crate::recording::{Finish, Recording, WriterLost};
use observer::{Direction, StdioObserver};
use tracer_serve::stop_signal::StopSignals;
use tracer_store::Store;
use tracer_wire::hop::Sink;
use tracer_wire::hop::{ServerLogLine, now_unix_ns};
use tracer_wire::stream::NdjsonDecoder;

/// How long the writer is given to take the last hops once the server has exited (the host
/// waits on this process).
const WRITER_WAIT: Duration = Duration::from_secs(1);

/// What to run and where to record it.
#[derive(Debug, Clone)]
pub struct WrapOptions {
    /// The server's name in traces (the route name of its hops).
    pub name: String,
    pub command: Vec<String>,
    pub db: PathBuf,
    pub max_body: usize,
    /// Redact secret JSON fields in the kept copies (`--no-redact` turns it off).
    pub redact: bool,
    /// The `tracer run` that started the server's host (its hops carry it).
    pub run_id: Option<String>,
}

/// Opens the database a wrapped server records into; `None` (said on stderr) passes through.
pub async fn open_store(options: &WrapOptions) -> Option<Store> {
    match Store::open(&options.db).await {
        Ok(store) => Some(store),
        Err(error) => {
            tracer_serve::say!("tracer wrap: not recording ({error}); passing through");
            None
        }
    }
}

/// Runs the wrapped server to its end, recording into `store` when there is one; returns the
/// exit code to leave with.
pub async fn run(options: WrapOptions, store: Option<Store>) -> anyhow::Result<i32> {
    let Some((program, args)) = options.command.split_first() else {
        anyhow::bail!("no server command: use tracer wrap -- COMMAND [ARGS...]");
    };
    let recording = match store.map(|store| Recording::start(store, options.run_id.clone())) {
        Some(Ok(recording)) => Some(recording),
        Some(Err(error)) => {
            tracer_serve::say!("tracer wrap: not recording ({error}); passing through");
            None
        }
        None => None,
    };
    // Heard from before the server starts: a signal never finds the default action.
    let mut signals = StopSignals::listen();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| anyhow::anyhow!("starting `{program}`: {e}"))?;
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    let command_line = options.command.join(" ");
    let observer = Arc::new(Mutex::new(
        StdioObserver::new(&options.name, &command_line, options.max_body)
            .redacting(options.redact),
    ));
    let recorder: Option<Sink> = recording.as_ref().map(Recording::sink);
    let tap = Tap {
        observer: observer.clone(),
        recorder: recorder.clone(),
    };

    let (Some(child_in), Some(child_out), Some(child_err)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        anyhow::bail!("the child's standard streams could not be piped");
    };
    let to_child = tokio::spawn(pump(
        tokio::io::stdin(),
        child_in,
        tap.clone(),
        Direction::ClientToServer,
    ));
    let from_child = tokio::spawn(pump(
        child_out,
        tokio::io::stdout(),
        tap,
        Direction::ServerToClient,
    ));
    let logs = tokio::spawn(pump_stderr(
        child_err,
        recorder.clone(),
        options.name.clone(),
    ));

    // Every stop signal is passed on until the server has exited.
    let status = loop {
        tokio::select! {
            status = child.wait() => break status?,
            (kind, name) = signals.next() => {
                tracing::debug!(name, "passing a signal on to the server");
                forward_signal(pid, kind);
            }
        }
    };
    // The server is gone: what it wrote is read to its end; the host's stdin may stay open.
    let _ = tokio::time::timeout(Duration::from_millis(500), from_child).await;
    let _ = tokio::time::timeout(Duration::from_millis(200), logs).await;
    to_child.abort();

    let leftovers = match observer.lock() {
        Ok(mut observer) => observer.finish("the server exited before answering", now_unix_ns()),
        Err(_) => Vec::new(),
    };
    if let Some(recorder) = &recorder {
        for event in leftovers {
            recorder.send(event);
        }
    }
    drop(recorder);
    if let Some(recording) = recording {
        match recording.finish(Finish::within(WRITER_WAIT)).await.writer {
            Ok(report) if report.hops_not_written > 0 => {
                let hops = match report.hops_not_written {
                    1 => "1 hop".to_string(),
                    n => format!("{n} hops"),
                };
                tracer_serve::say!("tracer wrap: {hops} not written");
            }
            Ok(_) | Err(WriterLost::Failed(_)) => {}
            Err(WriterLost::TimedOut(_)) => {
                tracer_serve::say!(
                    "tracer wrap: the database did not take the last hops within a second; \
                     they wait in the journal beside it for the next tracer on that database"
                )
            }
        }
    }
    Ok(exit_code(status))
}

/// The observer and recorder shared by both directions.
#[derive(Clone)]
struct Tap {
    observer: Arc<Mutex<StdioObserver>>,
    recorder: Option<Sink>,
}

impl Tap {
    fn line(&self, direction: Direction, line: &[u8]) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let events = match self.observer.lock() {
            Ok(mut observer) => observer.on_line(direction, line, now_unix_ns()),
            Err(_) => return,
        };
        for event in events {
            recorder.send(event);
        }
    }
}

/// Copies bytes as they arrive (never waiting for a line end), observing each complete line.
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    tap: Tap,
    direction: Direction,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = NdjsonDecoder::new();
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Observe before passing on: the reader may answer at once, and its answer must not be
        // seen before the message it answers. Parsing a line costs microseconds.
        for line in lines.push(&buf[..n]) {
            tap.line(direction, &line);
        }
        if to.write_all(&buf[..n]).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    if let Some(line) = lines.finish() {
        tap.line(direction, &line);
    }
    // Closing our side tells the reader (the server's stdin, or the host) the stream ended.
    let _ = to.shutdown().await;
}

async fn pump_stderr(mut from: impl AsyncRead + Unpin, recorder: Option<Sink>, route: String) {
    let mut stderr = tokio::io::stderr();
    let mut buf = vec![0u8; 16 * 1024];
    let mut lines = NdjsonDecoder::new();
    let keep = |line: Vec<u8>| {
        if let Some(recorder) = &recorder {
            recorder.log_line(ServerLogLine {
                route: route.clone(),
                logged_unix_ns: now_unix_ns(),
                line: String::from_utf8_lossy(&line).into_owned(),
            });
        }
    };
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let _ = stderr.write_all(&buf[..n]).await;
        let _ = stderr.flush().await;
        lines.push(&buf[..n]).into_iter().for_each(keep);
    }
    if let Some(line) = lines.finish() {
        keep(line);
    }
}

/// Passes a stop signal on to the server.
fn forward_signal(pid: Option<i32>, kind: tokio::signal::unix::SignalKind) {
    let raw = kind.as_raw_value();
    if let (Some(pid), Ok(sig)) = (pid, nix::sys::signal::Signal::try_from(raw)) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
