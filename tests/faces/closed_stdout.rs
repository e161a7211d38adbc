//! A reader that went away (`tracer demo | head -2`) is a clean exit 0 (ripgrep's rule): every
//! command that prints to stdout, run with a stdout pipe whose reading end is already closed,
//! exits 0 and says nothing of a panic; `tracer proxy` with its banner unread serves and stops
//! with 0.

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

#[test]
fn tracer_proxy_with_stdout_closed_serves_and_stops_with_0() {
    let dir = tempfile::tempdir().unwrap();
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let route = format!("model={listen}=http://127.0.0.1:9");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut proxy = Command::new(TRACER)
        .arg("--db")
        .arg(dir.path().join("t.db"))
        .args(["proxy", "--route", &route])
        .env("RUST_LOG", "off")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Its banner went nowhere; it listens all the same (the banner is printed once it does).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::net::TcpStream::connect(listen).is_err() {
        assert!(proxy.try_wait().unwrap().is_none(), "tracer proxy exited");
        assert!(std::time::Instant::now() < deadline, "nothing listens");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let output = proxy.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}
