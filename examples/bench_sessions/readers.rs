//! The readers run on the recorded database, each as a child process under the re-executed
//! measurer (its own peak RSS from getrusage): `ls`, `show`, `show --json`, html and md exports.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::MIB;

/// A reader run: wall time, peak RSS, output bytes.
struct ReaderRun {
    seconds: f64,
    peak_mib: f64,
    output_bytes: u64,
}

fn run_reader(tracer: &Path, dir: &Path, reader: &[&str]) -> Result<ReaderRun> {
    let out = dir.join("reader.out");
    let started = Instant::now();
    let output = Command::new(std::env::current_exe()?)
        .arg("--measure-child")
        .arg(&out)
        .arg(tracer)
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

pub fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

/// The first `tracer ls` after recording, measured: it computes and keeps what it lists (no
/// summary is kept yet), the listings after it read the kept ones.
pub fn first_ls(tracer: &Path, dir: &Path, db: &Path) -> Result<()> {
    let db_arg = db.to_string_lossy().to_string();
    let run = run_reader(tracer, dir, &["ls", "--db", &db_arg])?;
    let ok = run.seconds <= 0.3 && run.peak_mib <= 50.0;
    println!(
        "{:<34} {:>6.2} s {:>7.1} MiB   <= 0.3 s, <= 50 MiB   {}",
        "tracer ls (first, computes)",
        run.seconds,
        run.peak_mib,
        verdict(ok)
    );
    Ok(())
}

/// The trace with the most hops, by `tracer ls --json`: its id and hop count.
pub fn long_trace(tracer: &Path, db: &Path) -> Result<(String, i64)> {
    let listing = Command::new(tracer)
        .args(["ls", "--json", "-n", "100000", "--db"])
        .arg(db)
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
    Ok((id, longest["hop_count"].as_i64().unwrap_or(0)))
}

/// Runs the readers on the long trace `id` of `db` and prints each beside its goal.
pub fn readers(tracer: &Path, dir: &Path, db: &Path, id: &str, unique_bytes: u64) -> Result<()> {
    let db_arg = db.to_string_lossy().to_string();
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
        &run_reader(tracer, dir, &["ls", "--db", &db_arg])?,
        Some(0.3),
        50.0,
    );
    // A word of the prose in every request and many answers: every body is read (each stored
    // chunk once) and the long trace numbered (issue 44: <= 0.5 s).
    row(
        "tracer search parse",
        &run_reader(tracer, dir, &["search", "parse", "--db", &db_arg])?,
        Some(0.5),
        100.0,
    );
    row(
        "tracer show <long trace>",
        &run_reader(tracer, dir, &["show", id, "--db", &db_arg])?,
        Some(1.0),
        100.0,
    );
    let json_run = run_reader(tracer, dir, &["show", id, "--json", "--db", &db_arg])?;
    row("tracer show --json", &json_run, None, 150.0);
    println!(
        "{:<34} {:>9.1} MiB of output",
        "",
        json_run.output_bytes as f64 / MIB
    );
    row(
        "export --format html",
        &run_reader(
            tracer,
            dir,
            &["export", id, "-f", "html", "-o", &html, "--db", &db_arg],
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
        tracer,
        dir,
        &["export", id, "-f", "md", "-o", &md, "--db", &db_arg],
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
