//! A 14 MiB SSE answer through the real `tracer proxy` binary: its peak RSS before and after.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use sqlx::Row;
use tokio::process::Command;

use crate::{database, load, procfs, sse_stream, targets, upstream};

/// The release binary of this checkout, the default `--tracer`.
pub const DEFAULT_TRACER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/tracer");
/// How long the proxy may take to write and group the stream's hop.
const GROUPED_LIMIT: Duration = Duration::from_secs(120);
/// The wait after the hop is in a trace, so whatever the proxy does next has happened too.
const AFTER_GROUPED: Duration = Duration::from_secs(1);

/// What the stream did to the proxy.
#[derive(Debug, Clone)]
pub struct SseRun {
    /// Bytes of the answer the client received.
    pub stream_bytes: u64,
    pub elapsed: Duration,
    /// VmHWM after the warm-up, and after the stream's hop was written and grouped (+1 s).
    pub peak_before_kib: Option<u64>,
    pub peak_after_kib: Option<u64>,
    /// From the stream's end until its hop was complete and in a trace (None: not in the limit).
    pub grouped_after: Option<Duration>,
    /// After the proxy's clean stop: rows, complete rows, and the rows the bench sent.
    pub rows: i64,
    pub complete: i64,
    pub sent: i64,
    /// The proxy's last line on stderr (`stopped after ...`).
    pub proxy_said: String,
}

impl SseRun {
    /// Bytes the peak RSS rose by.
    pub fn raise_bytes(&self) -> Option<i64> {
        let before = i64::try_from(self.peak_before_kib?).ok()?;
        let after = i64::try_from(self.peak_after_kib?).ok()?;
        Some((after - before) * 1024)
    }
}

/// Starts `tracer proxy` on a temp database with a model route to `upstream`, sends a small
/// warm-up request and then the stream, and stops the proxy with SIGINT (its clean stop).
pub async fn run(tracer: &Path, upstream: SocketAddr) -> anyhow::Result<SseRun> {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("sse.db");
    let stderr_path = dir.path().join("proxy.stderr");
    let listen = targets::free_port()?;
    let mut proxy = Command::new(tracer)
        .arg("proxy")
        .arg("--db")
        .arg(&db)
        .arg("--route")
        .arg(format!("model={listen}=http://{upstream}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path)?)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", tracer.display()))?;
    let pid = proxy.id().context("the proxy's pid")?;
    targets::wait_listening(listen, Duration::from_secs(30)).await?;

    let (status, _) = send(listen, "/v1/chat", upstream::CHAT_REQUEST).await?;
    anyhow::ensure!(status.is_success(), "the warm-up request got {status}");
    let mut conn = database::open_read_only(&db).await?;
    wait_hop_grouped(&mut conn, "/v1/chat", GROUPED_LIMIT)
        .await?
        .context("the warm-up hop was not in a trace within the limit")?;
    let peak_before_kib = procfs::tree_peak_rss_kib(pid);

    let started = Instant::now();
    let (status, stream_bytes) = send(listen, sse_stream::PATH, sse_stream::REQUEST).await?;
    let elapsed = started.elapsed();
    anyhow::ensure!(status.is_success(), "the stream's request got {status}");
    let grouped_after = wait_hop_grouped(&mut conn, sse_stream::PATH, GROUPED_LIMIT).await?;
    drop(conn);
    tokio::time::sleep(AFTER_GROUPED).await;
    let peak_after_kib = procfs::tree_peak_rss_kib(pid);

    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid)?),
        nix::sys::signal::Signal::SIGINT,
    );
    let exit = tokio::time::timeout(Duration::from_secs(60), proxy.wait())
        .await
        .context("tracer proxy did not stop within 60 s of SIGINT")??;
    let said = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let proxy_said = said
        .lines()
        .rev()
        .find(|line| line.contains("stopped"))
        .unwrap_or("(nothing)")
        .trim()
        .to_string();
    anyhow::ensure!(exit.success(), "tracer proxy exited with {exit}: {said}");
    let (rows, complete) = rows_after_stop(&db).await?;
    Ok(SseRun {
        stream_bytes,
        elapsed,
        peak_before_kib,
        peak_after_kib,
        grouped_after,
        rows,
        complete,
        sent: 2,
        proxy_said,
    })
}

/// One POST on a new connection; the answer's status and body bytes (read, not kept).
async fn send(
    addr: SocketAddr,
    path: &str,
    body: &'static str,
) -> anyhow::Result<(http::StatusCode, u64)> {
    let mut connection = load::connect(addr).await?;
    let request = Request::post(path)
        .header(http::header::HOST, addr.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from_static(body.as_bytes())))?;
    let response = connection.send_request(request).await?;
    let status = response.status();
    let mut body = response.into_body();
    let mut bytes = 0u64;
    while let Some(frame) = body.frame().await {
        bytes += frame?.data_ref().map_or(0, |data| data.len() as u64);
    }
    Ok((status, bytes))
}

/// Polls until the hop of `path` is complete and in a trace; how long that took.
async fn wait_hop_grouped(
    conn: &mut sqlx::SqliteConnection,
    path: &str,
    limit: Duration,
) -> anyhow::Result<Option<Duration>> {
    let started = Instant::now();
    while started.elapsed() < limit {
        let grouped: i64 = sqlx::query_scalar(
            "select count(*) from hops where path = ? and state = 'complete' and trace_id is not null",
        )
        .bind(path)
        .fetch_one(&mut *conn)
        .await?;
        if grouped > 0 {
            return Ok(Some(started.elapsed()));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(None)
}

async fn rows_after_stop(db: &Path) -> anyhow::Result<(i64, i64)> {
    let mut conn = database::open_read_only(db).await?;
    let row = sqlx::query(
        "select count(*) as rows, count(*) filter (where state = 'complete') as complete from hops",
    )
    .fetch_one(&mut conn)
    .await?;
    Ok((row.try_get("rows")?, row.try_get("complete")?))
}

/// The stream's run, or the reason it was skipped, as a printed note (None: measured).
pub async fn run_or_skip(tracer: &Path, upstream: SocketAddr) -> Result<SseRun, String> {
    if !tracer.is_file() {
        return Err(format!(
            "note: {} not found (cargo build --release, or --tracer PATH); no 14 MiB SSE measure",
            tracer.display()
        ));
    }
    println!(
        "sending a {} MiB SSE answer through {} proxy ...",
        sse_stream::TARGET_BYTES >> 20,
        tracer.display()
    );
    run(tracer, upstream)
        .await
        .map_err(|error| format!("note: the 14 MiB SSE measure failed: {error:#}"))
}

/// The stream's figures (the goal is in `goals.rs`).
pub fn describe(run: &SseRun) -> String {
    let mib =
        |kib: Option<u64>| kib.map_or_else(|| "–".into(), |k| format!("{:.1}", k as f64 / 1024.0));
    format!(
        "14 MiB SSE through tracer proxy: {} bytes in {:.2} s; hop complete and in a trace {} after the \
         stream; VmHWM {} → {} MiB (after the warm-up hop; after the stream's hop was grouped, +1 s); \
         after SIGINT: {} rows ({} complete) of {} sent; proxy said: {}\n",
        run.stream_bytes,
        run.elapsed.as_secs_f64(),
        run.grouped_after.map_or_else(
            || "not within 120 s".into(),
            |d| format!("{:.2} s", d.as_secs_f64())
        ),
        mib(run.peak_before_kib),
        mib(run.peak_after_kib),
        run.rows,
        run.complete,
        run.sent,
        run.proxy_said,
    )
}

/// `--tracer`'s default as a path.
pub fn default_tracer() -> PathBuf {
    PathBuf::from(DEFAULT_TRACER)
}
