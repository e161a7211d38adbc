//! A reader that went away (`tracer demo | head -2`) is a clean exit 0 (ripgrep's rule): every
//! command that prints to stdout, run with a stdout pipe whose reading end is already closed,
//! exits 0 and says nothing of a panic.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::hostile::{HOSTILE_ID, hostile_db};
use crate::sample_db::{BUY_MILK, TRACER};

/// Runs `tracer --db DB ARGS` with stdout a pipe nobody reads: its reading end is closed before
/// the process starts, so every write to stdout fails with EPIPE.
fn into_closed_pipe(db: &Path, args: &[&str], dir: &Path) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn every_printing_command_exits_0_when_stdout_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let (file, db) = hostile_db(dir.path());
    let file = file.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["demo", "--recorded", "--dir", "demo-run"],
        vec!["ls"],
        vec!["ls", "--json"],
        vec!["ls", "--hops"],
        vec!["show", BUY_MILK],
        vec!["show", BUY_MILK, "--json"],
        vec!["replay", BUY_MILK, "--plain"],
        vec!["replay", file, "--plain"],
        vec!["diff", BUY_MILK, HOSTILE_ID],
        vec!["export", BUY_MILK, "-f", "md"],
        vec!["export", BUY_MILK, "-f", "json"],
        vec!["export", BUY_MILK, "-f", "html"],
        vec!["export", "--all", "-f", "har"],
        vec!["correlate"],
        vec!["completions", "bash"],
    ];
    for args in commands {
        let output = into_closed_pipe(&db, &args, dir.path());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?} panicked:\n{stderr}");
        assert_eq!(output.status.code(), Some(0), "{args:?}:\n{stderr}");
    }
}
