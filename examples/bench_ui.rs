//! The live web UI (`tracer ui`) on long sessions, in a real headless Chromium: first meaningful
//! paint, opening messages, the tab's JS heap and the server's RSS on the 600-turn session of
//! `bench_sessions` and on a 100,000-hop database, each beside its goal.
//! `cargo run --example bench_ui -- [--tracer PATH] [--session-db FILE] [--turns N]
//! [--big-db FILE] [--big-traces N] [--runs N] [--skip-session] [--skip-big]`.
//!
//! Needs python3 with Playwright (`import playwright`) and Chromium at /usr/bin/chromium
//! (`--python`, `--chromium`); the driver is `examples/bench_ui/measure.py`.

#[path = "bench_ui/big_db.rs"]
mod big_db;
#[path = "bench_ui/report.rs"]
mod report;
#[path = "bench_ui/server.rs"]
mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::Value;

struct Args {
    tracer: PathBuf,
    session_db: Option<PathBuf>,
    turns: Option<usize>,
    big_db: Option<PathBuf>,
    big_traces: usize,
    runs: usize,
    python: PathBuf,
    chromium: PathBuf,
    skip_session: bool,
    skip_big: bool,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        tracer: root().join("target/release/tracer"),
        session_db: None,
        turns: None,
        big_db: None,
        big_traces: 20_000,
        runs: 3,
        python: "python3".into(),
        chromium: "/usr/bin/chromium".into(),
        skip_session: false,
        skip_big: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().context("a value is missing");
        match arg.as_str() {
            "--tracer" => args.tracer = value()?.into(),
            "--session-db" => args.session_db = Some(value()?.into()),
            "--turns" => args.turns = Some(value()?.parse()?),
            "--big-db" => args.big_db = Some(value()?.into()),
            "--big-traces" => args.big_traces = value()?.parse::<usize>()?.max(1),
            "--runs" => args.runs = value()?.parse::<usize>()?.max(1),
            "--python" => args.python = value()?.into(),
            "--chromium" => args.chromium = value()?.into(),
            "--skip-session" => args.skip_session = true,
            "--skip-big" => args.skip_big = true,
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench_ui: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The hops stored in `db`.
fn hop_count(db: &Path) -> Result<i64> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let store = tracer_store::Store::open_read_only(db).await?;
        let hops = store.hop_count().await?;
        store.close().await;
        anyhow::Ok(hops)
    })
}

/// 100000 as 100,000.
fn thousands(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Which build a binary is, by where cargo put it.
fn profile_of(binary: &Path) -> &'static str {
    let path = binary.to_string_lossy();
    if path.contains("/release/") {
        "release build"
    } else if path.contains("/debug/") {
        "debug build"
    } else {
        "build profile unknown"
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn run() -> Result<()> {
    let args = parse_args()?;
    if !args.tracer.exists() {
        bail!(
            "{} is missing: cargo build --release first (or --tracer target/debug/tracer)",
            args.tracer.display()
        );
    }
    let tracer = args.tracer.canonicalize()?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "bench_ui: measuring {} ({}); {cores} cores; load average at start {}",
        tracer.display(),
        profile_of(&tracer),
        load_average()
    );
    let bench_started = Instant::now();
    let dir = tempfile::tempdir()?;
    let mut rows = Vec::new();
    let mut details = Vec::new();
    if !args.skip_session {
        let db = session_db(&args, &tracer, dir.path())?;
        let name = format!("session ({} hops)", thousands(hop_count(&db)?));
        let (m, memory) = measure(&args, &tracer, &db, "session")?;
        rows.extend(report::rows(&name, &m, &memory));
        details.push((name, m, memory));
    }
    if !args.skip_big {
        let db = big_db(&args, dir.path())?;
        let name = format!("big ({} hops)", thousands(hop_count(&db)?));
        let (m, memory) = measure(&args, &tracer, &db, "big")?;
        rows.extend(report::rows(&name, &m, &memory));
        details.push((name, m, memory));
    }
    println!();
    for (name, m, memory) in &details {
        report::details(name, m, memory);
    }
    println!();
    println!(
        "tracer ui, {} ({}), Chromium {}:",
        tracer.display(),
        profile_of(&tracer),
        details
            .first()
            .and_then(|(_, m, _)| m["chromium"].as_str())
            .unwrap_or("?")
    );
    report::print(&rows);
    if let Some((_, m, _)) = details.iter().find(|(_, m, _)| m["mode"] == "session") {
        let mib = m["trace"]["body_bytes"].as_f64().unwrap_or(0.0) / (1024.0 * 1024.0);
        let worst = m["trace_paint"]["wall_s"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_f64)
            .fold(0.0, f64::max);
        println!(
            "beside claude-tap: 0.5 s to open a 45.8 MB trace, as its users report it (a figure quoted, not measured here); \
             tracer ui: {worst:.2} s to the first message of a trace of {mib:.1} MiB of bodies (measured above, {})",
            profile_of(&tracer)
        );
    }
    println!(
        "the bench took {:.0} s; load average at end {}",
        bench_started.elapsed().as_secs_f64(),
        load_average()
    );
    Ok(())
}

/// The 600-turn session: `--session-db FILE` when it exists, else recorded into it (or into a
/// temp file) by the bench_sessions example through a real `tracer proxy`.
fn session_db(args: &Args, tracer: &Path, dir: &Path) -> Result<PathBuf> {
    let db = match &args.session_db {
        Some(db) if db.exists() => {
            println!("the session database: {} (reused)", db.display());
            return Ok(db.clone());
        }
        Some(db) => db.clone(),
        None => dir.join("session.db"),
    };
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or("cargo".into()));
    command.current_dir(root()).arg("run");
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    command
        .args(["--example", "bench_sessions", "--", "--db"])
        .arg(&db)
        .arg("--tracer")
        .arg(tracer);
    if let Some(turns) = args.turns {
        command.arg("--turns").arg(turns.to_string());
    }
    println!(
        "recording the session with bench_sessions into {} ({} turns; its readers run after it)",
        db.display(),
        args.turns.map_or("600".into(), |t| t.to_string())
    );
    let started = Instant::now();
    let status = command.stdin(Stdio::null()).status()?;
    if !status.success() || !db.exists() {
        bail!("bench_sessions did not record the session ({status})");
    }
    println!(
        "bench_sessions took {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(db)
}

/// The 100,000-hop database: `--big-db FILE` when it exists, else made into it (or a temp file).
fn big_db(args: &Args, dir: &Path) -> Result<PathBuf> {
    let db = match &args.big_db {
        Some(db) if db.exists() => {
            println!("the big database: {} (reused)", db.display());
            return Ok(db.clone());
        }
        Some(db) => db.clone(),
        None => dir.join("big.db"),
    };
    println!(
        "making the big database {}: {} traces of 5 hops from sample-traces/",
        db.display(),
        args.big_traces
    );
    let started = Instant::now();
    let hops = big_db::make(&root(), &db, args.big_traces)?;
    println!(
        "made it in {:.0} s: {hops} hops, {:.1} MiB",
        started.elapsed().as_secs_f64(),
        std::fs::metadata(&db).map_or(0, |m| m.len()) as f64 / (1024.0 * 1024.0)
    );
    Ok(db)
}

/// Serves `db` with `tracer ui`, drives the page with measure.py in `mode`; its JSON and the
/// server's memory.
fn measure(args: &Args, tracer: &Path, db: &Path, mode: &str) -> Result<(Value, server::Memory)> {
    let ui = server::Ui::start(tracer, db)?;
    println!(
        "tracer ui on {}: {} ({:.2} s to its URL, {:.1} MiB RSS)",
        db.display(),
        ui.url,
        ui.started_in.as_secs_f64(),
        ui.start_kib as f64 / 1024.0
    );
    let output = Command::new(&args.python)
        .arg(root().join("examples/bench_ui/measure.py"))
        .args(["--url", &ui.url, "--mode", mode, "--runs"])
        .arg(args.runs.to_string())
        .arg("--chromium")
        .arg(&args.chromium)
        .arg("--server-pid")
        .arg(ui.pid().to_string())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", args.python.display()))?;
    let memory = ui.finish()?;
    if !output.status.success() {
        bail!("measure.py failed ({})", output.status);
    }
    let m: Value = serde_json::from_slice(&output.stdout).context("measure.py's JSON")?;
    Ok((m, memory))
}
