//! A long agent session recorded through a real `tracer proxy` and read back: proxy RSS, hops
//! lost, database size against the bodies' raw bytes, and the time and peak memory of `ls`,
//! `show`, `show --json` and the html and md exports, each beside its goal (issue 28).
//! `cargo run --release --example bench_sessions -- [--turns N] [--db EXISTING.db]`.

#[path = "bench_sessions/http.rs"]
mod http;
#[path = "bench_sessions/session.rs"]
mod session;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use session::{Answer, Rng};

const MIB: f64 = 1024.0 * 1024.0;

struct Args {
    turns: usize,
    tool_every: usize,
    tracer: PathBuf,
    db: Option<PathBuf>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        turns: 600,
        tool_every: 4,
        tracer: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/tracer"),
        db: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().context("a value is missing");
        match arg.as_str() {
            "--turns" => args.turns = value()?.parse()?,
            "--tool-every" => args.tool_every = value()?.parse::<usize>()?.max(1),
            "--tracer" => args.tracer = value()?.into(),
            "--db" => args.db = Some(value()?.into()),
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).is_some_and(|a| a == "--measure-child") {
        return measure_child(&argv[2..]);
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
    requests: u64,
    raw_body_bytes: u64,
    unique_bytes: u64,
    proxy_peak_kib: u64,
    elapsed: Duration,
}

/// Plays the session through `model_addr` and `mcp_addr`, feeding the upstream its answers.
fn play(
    args: &Args,
    model_addr: &str,
    mcp_addr: &str,
    answers: &std::sync::mpsc::Sender<Vec<String>>,
) -> Result<(u64, u64, u64)> {
    let mut rng = Rng::new(42);
    let (system, tools) = session::preamble(&mut rng);
    let mut unique = (system.to_string().len() + tools.to_string().len()) as u64;
    let mut history: Vec<Value> = Vec::new();
    let mut model = http::Client::connect(model_addr)?;
    let mut mcp = http::Client::connect(mcp_addr)?;
    let (mut requests, mut raw) = (0u64, 0u64);
    let mut next_user: Value = json!({"role": "user", "content": session::prose(&mut rng, 300)});
    for turn in 0..args.turns {
        if turn == 0 {
            unique += next_user.to_string().len() as u64;
        }
        history.push(next_user.clone());
        let body = session::request_body(&system, &tools, &history);
        let answer = session::answer_for(&mut rng, turn, args.turns, args.tool_every);
        answers.send(session::sse_events(&answer, turn))?;
        let reply = model.post(
            "/v1/messages",
            "anthropic-version: 2023-06-01\r\nx-api-key: sk-ant-bench\r\n",
            &body,
        )?;
        requests += 1;
        raw += (body.len() + reply.len()) as u64;
        unique += reply.len() as u64;
        history.push(session::assistant_message(&answer));
        next_user = match &answer {
            Answer::ToolUse { id, query, .. } if answer.calls_mcp() => {
                let call = session::mcp_call(turn, query);
                let result = mcp.post(
                    "/mcp",
                    "accept: application/json, text/event-stream\r\n",
                    &call,
                )?;
                requests += 1;
                raw += (call.len() + result.len()) as u64;
                unique += (call.len() + result.len()) as u64;
                let result: Value = serde_json::from_slice(&result)?;
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                    "content": result["result"]["content"]}]})
            }
            Answer::ToolUse { id, .. } => {
                let len = 300 + rng.below(1500) as usize;
                let text = session::prose(&mut rng, len);
                unique += text.len() as u64;
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                    "content": [{"type": "text", "text": text}]}]})
            }
            Answer::Text(_) => Value::Null,
        };
    }
    Ok((requests, raw, unique))
}

fn record(args: &Args, db: &Path) -> Result<Recorded> {
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
    let played = play(
        args,
        &model_addr,
        &format!("127.0.0.1:{mcp_port}"),
        &answers,
    );
    let elapsed = started.elapsed();
    // Stopped like Ctrl-C: every hop it took is written before it exits.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let status = proxy.wait()?;
    let _ = watcher.join();
    let (requests, raw_body_bytes, unique_bytes) = played?;
    if !status.success() {
        bail!("tracer proxy exited with {status}");
    }
    Ok(Recorded {
        requests,
        raw_body_bytes,
        unique_bytes,
        proxy_peak_kib: peak.load(std::sync::atomic::Ordering::Relaxed),
        elapsed,
    })
}

/// A reader run: wall time, peak RSS, output bytes.
struct ReaderRun {
    seconds: f64,
    peak_mib: f64,
    output_bytes: u64,
}

fn run_reader(args: &Args, dir: &Path, reader: &[&str]) -> Result<ReaderRun> {
    let out = dir.join("reader.out");
    let started = Instant::now();
    let output = Command::new(std::env::current_exe()?)
        .arg("--measure-child")
        .arg(&out)
        .arg(&args.tracer)
        .args(reader)
        .output()?;
    let seconds = started.elapsed().as_secs_f64();
    if !output.status.success() {
        bail!(
            "tracer {} failed: {}",
            reader.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let kib: f64 = String::from_utf8_lossy(&output.stdout).trim().parse()?;
    let output_bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&out);
    Ok(ReaderRun {
        seconds,
        peak_mib: kib / 1024.0,
        output_bytes,
    })
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

async fn counts(db: &Path) -> Result<(i64, i64)> {
    let store = tracer::store::Store::open_read_only(db).await?;
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
        "bench_sessions: {} turns, a tool call every {}; load average at start {}",
        args.turns,
        args.tool_every,
        load.trim()
    );
    let dir = tempfile::tempdir()?;
    let db = match &args.db {
        Some(db) => db.clone(),
        None => dir.path().join("session.db"),
    };
    // `--db FILE` records into FILE when it does not exist yet (kept for later `--db` runs).
    if args.db.as_ref().is_none_or(|db| !db.exists()) {
        let recorded = record(&args, &db)?;
        let runtime = tokio::runtime::Runtime::new()?;
        let (hops, not_written) = runtime.block_on(counts(&db))?;
        let db_bytes = ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(format!("{}{s}", db.display())).ok())
            .map(|m| m.len())
            .sum::<u64>();
        let peak = recorded.proxy_peak_kib as f64 / 1024.0;
        println!(
            "recorded {} requests in {:.1} s; bodies {:.1} MiB raw, {:.1} MiB unique content",
            recorded.requests,
            recorded.elapsed.as_secs_f64(),
            recorded.raw_body_bytes as f64 / MIB,
            recorded.unique_bytes as f64 / MIB
        );
        println!("{:<34} {:>12}   goal", "figure", "measured");
        println!(
            "{:<34} {:>9.1} MiB   <= 64 MiB   {}",
            "proxy peak RSS while recording",
            peak,
            verdict(peak <= 64.0)
        );
        let lost = recorded.requests as i64 - hops;
        println!(
            "{:<34} {:>12}   0           {}",
            "hops lost (sent - stored)",
            format!("{lost} ({not_written} counted)"),
            verdict(lost == 0 && not_written == 0)
        );
        let share = db_bytes as f64 / recorded.raw_body_bytes as f64 * 100.0;
        println!(
            "{:<34} {:>9.1} MiB   <= 10% of raw: {:.1}%  {}",
            "database size",
            db_bytes as f64 / MIB,
            share,
            verdict(share <= 10.0)
        );
        readers(&args, dir.path(), &db, recorded.unique_bytes)?;
    } else {
        readers(&args, dir.path(), &db, 0)?;
    }
    println!(
        "load average at end {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    Ok(())
}

fn readers(args: &Args, dir: &Path, db: &Path, unique_bytes: u64) -> Result<()> {
    let db_arg = db.to_string_lossy().to_string();
    let listing = Command::new(&args.tracer)
        .args(["ls", "--json", "-n", "1000", "--db", &db_arg])
        .output()?;
    let traces: Value = serde_json::from_slice(&listing.stdout).context("tracer ls --json")?;
    let longest = traces
        .as_array()
        .and_then(|all| {
            all.iter()
                .max_by_key(|t| t["hop_count"].as_i64().unwrap_or(0))
        })
        .context("no trace listed")?;
    let id = longest["id"]
        .as_str()
        .or(longest["trace_id"].as_str())
        .context("trace id")?
        .to_string();
    println!("the long trace: {id}, {} hops", longest["hop_count"]);
    let html = dir.join("t.html").to_string_lossy().to_string();
    let md = dir.join("t.md").to_string_lossy().to_string();
    let row = |name: &str, run: &ReaderRun, secs: Option<f64>, mib: f64| {
        let goal = secs.map_or(String::new(), |s| format!("<= {s} s, "));
        let ok = secs.is_none_or(|s| run.seconds <= s) && run.peak_mib <= mib;
        println!(
            "{name:<34} {:>6.2} s {:>7.1} MiB   {goal}<= {mib} MiB   {}",
            run.seconds,
            run.peak_mib,
            verdict(ok)
        );
    };
    row(
        "tracer ls",
        &run_reader(args, dir, &["ls", "--db", &db_arg])?,
        Some(0.3),
        50.0,
    );
    row(
        "tracer show <long trace>",
        &run_reader(args, dir, &["show", &id, "--db", &db_arg])?,
        Some(1.0),
        100.0,
    );
    let json_run = run_reader(args, dir, &["show", &id, "--json", "--db", &db_arg])?;
    row("tracer show --json", &json_run, None, 150.0);
    println!(
        "{:<34} {:>9.1} MiB of output",
        "",
        json_run.output_bytes as f64 / MIB
    );
    row(
        "export --format html",
        &run_reader(
            args,
            dir,
            &["export", &id, "-f", "html", "-o", &html, "--db", &db_arg],
        )?,
        Some(5.0),
        200.0,
    );
    let html_len = std::fs::metadata(&html).map(|m| m.len()).unwrap_or(0);
    if unique_bytes > 0 {
        let times = html_len as f64 / unique_bytes as f64;
        println!(
            "{:<34} {:>9.1} MiB   <= 3x unique content: {times:.1}x  {}",
            "html file",
            html_len as f64 / MIB,
            verdict(times <= 3.0)
        );
    } else {
        println!("{:<34} {:>9.1} MiB", "html file", html_len as f64 / MIB);
    }
    let md_run = run_reader(
        args,
        dir,
        &["export", &id, "-f", "md", "-o", &md, "--db", &db_arg],
    )?;
    println!(
        "{:<34} {:>6.2} s {:>7.1} MiB   (no goal; the issue measured 9.5 s)",
        "export --format md", md_run.seconds, md_run.peak_mib
    );
    println!(
        "{:<34} {:>9.1} MiB",
        "md file",
        std::fs::metadata(&md).map(|m| m.len()).unwrap_or(0) as f64 / MIB
    );
    Ok(())
}
