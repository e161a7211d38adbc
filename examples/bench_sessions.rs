//! A long agent session recorded through a real `tracer proxy` and read back: proxy RSS, hops
//! lost, database size against the bodies' raw bytes, the time and peak memory of `ls`, `show`,
//! `show --json`, the html and md exports and the TUI, each beside its goal (issue 28).
//! `cargo run --release --example bench_sessions -- [--turns N] [--shape qwen604]
//! [--pad-db-mib N] [--db FILE]`.

#[path = "bench_sessions/chat.rs"]
mod chat;
#[path = "bench_sessions/http.rs"]
mod http;
#[path = "bench_sessions/play.rs"]
mod play;
#[path = "bench_sessions/readers.rs"]
mod readers;
#[path = "bench_sessions/session.rs"]
mod session;
#[path = "bench_sessions/shape.rs"]
mod shape;
#[path = "bench_sessions/tui.rs"]
mod tui;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use play::{Played, Script, db_bytes};
use readers::verdict;
use shape::Shape;

const MIB: f64 = 1024.0 * 1024.0;

struct Args {
    turns: Option<usize>,
    tool_every: usize,
    shape: Shape,
    pad_db_mib: Option<u64>,
    tracer: PathBuf,
    db: Option<PathBuf>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        turns: None,
        tool_every: 4,
        shape: Shape::Claude,
        pad_db_mib: None,
        tracer: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/tracer"),
        db: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().context("a value is missing");
        match arg.as_str() {
            "--turns" => args.turns = Some(value()?.parse()?),
            "--tool-every" => args.tool_every = value()?.parse::<usize>()?.max(1),
            "--shape" => {
                let name = value()?;
                args.shape = Shape::parse(&name)
                    .with_context(|| format!("--shape {name}: claude or qwen604"))?;
            }
            "--pad-db-mib" => args.pad_db_mib = Some(value()?.parse()?),
            "--tracer" => args.tracer = value()?.into(),
            "--db" => args.db = Some(value()?.into()),
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(args)
}

impl Args {
    fn turns(&self) -> usize {
        self.turns.unwrap_or(self.shape.default_turns())
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).is_some_and(|a| a == "--measure-child") {
        return measure_child(&argv[2..]);
    }
    if argv.get(1).is_some_and(|a| a == "--tui-child") {
        return tui::child(&argv[2..]);
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench_sessions: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Hidden mode: runs a command (stdout to the file named first), then prints the child's peak
/// RSS in KiB from getrusage, so each reader's peak is its own.
fn measure_child(argv: &[String]) -> ExitCode {
    let Some((out, command)) = argv.split_first() else {
        return ExitCode::FAILURE;
    };
    let Ok(out) = std::fs::File::create(out) else {
        return ExitCode::FAILURE;
    };
    let status = Command::new(&command[0])
        .args(&command[1..])
        .stdout(out)
        .status();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN);
    match (status, usage) {
        (Ok(status), Ok(usage)) if status.success() => {
            println!("{}", usage.max_rss());
            ExitCode::SUCCESS
        }
        _ => ExitCode::FAILURE,
    }
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What recording the session gave.
struct Recorded {
    played: Played,
    proxy_peak_kib: u64,
    elapsed: Duration,
}

/// Runs a proxy on `db` in front of the scripted upstream while `player` plays through its
/// model and MCP routes; stopped with SIGINT once the player is done.
fn record<P>(args: &Args, db: &Path, player: P) -> Result<Recorded>
where
    P: FnOnce(&str, &str, &Sender<Vec<String>>) -> Result<Played>,
{
    let upstream = TcpListener::bind("127.0.0.1:0")?;
    let upstream_addr = upstream.local_addr()?;
    let (answers, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || http::serve_upstream(upstream, receive));
    let (model_port, mcp_port) = (free_port()?, free_port()?);
    let mut proxy = Command::new(&args.tracer)
        .arg("proxy")
        .arg("--db")
        .arg(db)
        .arg("--route")
        .arg(format!(
            "model=127.0.0.1:{model_port}=http://{upstream_addr}"
        ))
        .arg("--route")
        .arg(format!(
            "mcp:docs=127.0.0.1:{mcp_port}=http://{upstream_addr}"
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", args.tracer.display()))?;
    let pid = proxy.id();
    let model_addr = format!("127.0.0.1:{model_port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(&model_addr).is_err() {
        if Instant::now() > deadline {
            bail!("the proxy did not listen");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let watcher = {
        let peak = peak.clone();
        std::thread::spawn(move || {
            while let Some(kib) = peak_rss_kib(pid) {
                peak.fetch_max(kib, std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let started = Instant::now();
    let played = player(&model_addr, &format!("127.0.0.1:{mcp_port}"), &answers);
    let elapsed = started.elapsed();
    // The proxy keeps readings and listings as it records; a session played this fast leaves
    // it some to finish after the last turn, as a user's pause would.
    let caught_up =
        tokio::runtime::Runtime::new()?.block_on(wait_kept(db, Duration::from_secs(120)));
    match caught_up {
        Ok(Some(after)) => println!(
            "the proxy had kept every reading and listing {:.1} s after the last turn",
            after.as_secs_f64()
        ),
        Ok(None) => println!("the proxy had not kept every reading and listing after 120 s"),
        Err(error) => println!("the proxy's kept readings could not be counted: {error:#}"),
    }
    // Stopped like Ctrl-C: every hop it took is written before it exits.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let status = proxy.wait()?;
    let _ = watcher.join();
    let played = played?;
    if !status.success() {
        bail!("tracer proxy exited with {status}");
    }
    Ok(Recorded {
        played,
        proxy_peak_kib: peak.load(std::sync::atomic::Ordering::Relaxed),
        elapsed,
    })
}

/// How long after now the proxy has kept the reading of every large model request and the
/// listing of every ended trace (None: not within `limit`).
async fn wait_kept(db: &Path, limit: Duration) -> Result<Option<Duration>> {
    let started = Instant::now();
    let store = tracer_store::Store::open_read_only(db).await?;
    while started.elapsed() < limit {
        let left: i64 = sqlx::query_scalar(
            "select (select count(*) from hops h where h.request_body_len >= 65536
                       and h.role <> 'agent' and h.websocket is null
                       and not exists (select 1 from hop_readings r where r.hop_id = h.id))
                  + (select count(*) from traces t where t.ended_unix_ns is not null
                       and not exists (select 1 from trace_summaries s where s.trace_id = t.id))
                  + (select count(*) from hops where trace_id is null)",
        )
        .fetch_one(store.pool())
        .await?;
        if left == 0 {
            store.close().await;
            return Ok(Some(started.elapsed()));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    store.close().await;
    Ok(None)
}

async fn counts(db: &Path) -> Result<(i64, i64)> {
    let store = tracer_store::Store::open_read_only(db).await?;
    Ok((
        store.hop_count().await?,
        store.counter("hops_not_written").await.unwrap_or(0),
    ))
}

fn run() -> Result<()> {
    let args = parse_args()?;
    if !args.tracer.exists() {
        bail!(
            "{} is missing: cargo build --release first",
            args.tracer.display()
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "bench_sessions: {}, {} turns, a tool call every {}; load average at start {}",
        args.shape.name(),
        args.turns(),
        args.tool_every,
        load.trim()
    );
    let dir = tempfile::tempdir()?;
    let db = match &args.db {
        Some(db) => db.clone(),
        None => dir.path().join("session.db"),
    };
    // `--db FILE` records into FILE when it does not exist yet (kept for later `--db` runs).
    let mut unique_bytes = 0;
    if args.db.as_ref().is_none_or(|db| !db.exists()) {
        unique_bytes = record_session(&args, &db)?;
    }
    if let Some(mib) = args.pad_db_mib {
        pad_db(&args, &db, mib)?;
    }
    readers::first_ls(&args.tracer, dir.path(), &db)?;
    let (id, hops) = readers::long_trace(&args.tracer, &db)?;
    println!("the long trace: {id}, {hops} hops");
    readers::readers(&args.tracer, dir.path(), &db, &id, unique_bytes)?;
    tui::run(dir.path(), &db, &id)?;
    println!(
        "load average at end {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    Ok(())
}

/// Records the long session into `db` and prints the recording's figures; returns the
/// session's unique content in bytes.
fn record_session(args: &Args, db: &Path) -> Result<u64> {
    let script = Script {
        shape: args.shape,
        turns: args.turns(),
        tool_every: args.tool_every,
        seed: 42,
        result_len: (300, 1500),
    };
    let recorded = record(args, db, |model, mcp, answers| {
        play::play(&script, model, mcp, answers)
    })?;
    let played = &recorded.played;
    let runtime = tokio::runtime::Runtime::new()?;
    let (hops, not_written) = runtime.block_on(counts(db))?;
    let db_bytes = db_bytes(db);
    let peak = recorded.proxy_peak_kib as f64 / 1024.0;
    println!(
        "recorded {} requests in {:.1} s; first request {:.1} KB; bodies {:.1} MiB raw, {:.1} MiB unique content",
        played.requests,
        recorded.elapsed.as_secs_f64(),
        played.first_request as f64 / 1000.0,
        played.raw as f64 / MIB,
        played.unique as f64 / MIB
    );
    println!("{:<34} {:>12}   goal", "figure", "measured");
    println!(
        "{:<34} {:>9.1} MiB   <= 64 MiB   {}",
        "proxy peak RSS while recording",
        peak,
        verdict(peak <= 64.0)
    );
    let lost = played.requests as i64 - hops;
    println!(
        "{:<34} {:>12}   0           {}",
        "hops lost (sent - stored)",
        format!("{lost} ({not_written} counted)"),
        verdict(lost == 0 && not_written == 0)
    );
    let share = db_bytes as f64 / played.raw as f64 * 100.0;
    println!(
        "{:<34} {:>9.1} MiB   <= 10% of raw: {:.1}%  {}",
        "database size",
        db_bytes as f64 / MIB,
        share,
        verdict(share <= 10.0)
    );
    Ok(played.unique)
}

/// Grows `db` to about `mib` MiB with short independent sessions recorded through the proxy,
/// so the readers run on a big database, as a user's is after weeks.
fn pad_db(args: &Args, db: &Path, mib: u64) -> Result<()> {
    let target = mib * 1024 * 1024;
    let before = db_bytes(db);
    if before >= target {
        println!(
            "padding: the database already holds {:.1} MiB",
            before as f64 / MIB
        );
        return Ok(());
    }
    // While the proxy runs, the write-ahead log makes the database look bigger than it stays:
    // recorded again (new sessions) until the file checkpointed on exit is big enough.
    let (mut all, mut seconds) = (Played::default(), 0.0);
    for _ in 0..20 {
        if db_bytes(db) >= target {
            break;
        }
        let first_seed = 1_000 + all.sessions;
        let recorded = record(args, db, |model, mcp, answers| {
            play::pad(args.shape, (target, first_seed), db, model, mcp, answers)
        })?;
        all.add(&recorded.played);
        seconds += recorded.elapsed.as_secs_f64();
    }
    println!(
        "padded with {} sessions ({} requests, {:.1} MiB raw, {:.1} MiB unique) in {seconds:.1} s: database {:.1} MiB (asked {mib} MiB)",
        all.sessions,
        all.requests,
        all.raw as f64 / MIB,
        all.unique as f64 / MIB,
        db_bytes(db) as f64 / MIB
    );
    Ok(())
}
