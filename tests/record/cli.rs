//! The `tracer` binary as a user runs it: usage errors, start-up errors, listings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;

#[test]
fn a_malformed_route_is_a_usage_error_naming_the_bad_part() {
    for (route, expected) in [
        ("model=127.0.0.1:1", "ROLE[:NAME]=LISTEN=UPSTREAM"),
        (
            "bogus=127.0.0.1:1=http://127.0.0.1:2",
            "unknown role `bogus`",
        ),
        (
            "model=nowhere=http://127.0.0.1:2",
            "listen address `nowhere`",
        ),
    ] {
        cargo_bin_cmd!("tracer")
            .args(["proxy", "--route", route])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
}

#[test]
fn a_port_in_use_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let output = cargo_bin_cmd!("tracer")
        .args(["--db", dir.path().join("t.db").to_str().unwrap()])
        .args([
            "proxy",
            "--route",
            &format!("model=127.0.0.1:{port}=http://127.0.0.1:9"),
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot listen on") && stderr.contains(&port.to_string()),
        "{stderr}"
    );
}

#[test]
fn a_database_that_is_not_tracers_or_is_read_only_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.db");
    std::fs::write(&text, "buy milk\n".repeat(200)).unwrap();
    let output = cargo_bin_cmd!("tracer")
        .args(["--db", text.to_str().unwrap(), "ls"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("notes.db"), "{stderr}");

    let foreign = dir.path().join("foreign.db");
    let status = Command::new("sqlite3")
        .arg(&foreign)
        .arg("create table people (name text);")
        .status();
    if status.is_ok_and(|s| s.success()) {
        cargo_bin_cmd!("tracer")
            .args(["--db", foreign.to_str().unwrap(), "ls"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("is not a tracer database"));
    }

    // Read-only: only meaningful when not running as a user who ignores permissions.
    let ro_dir = dir.path().join("ro");
    std::fs::create_dir(&ro_dir).unwrap();
    let ro = ro_dir.join("t.db");
    create_empty_database(&ro);
    cargo_bin_cmd!("tracer")
        .args(["--db", ro.to_str().unwrap(), "ls"])
        .assert()
        .success();
    let file = std::fs::File::open(&ro).unwrap();
    let mut perms = file.metadata().unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&ro, perms.clone()).unwrap();
    if std::fs::OpenOptions::new().write(true).open(&ro).is_err() {
        cargo_bin_cmd!("tracer")
            .args(["--db", ro.to_str().unwrap(), "ls"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("read"));
    }
}

#[test]
fn ls_on_an_empty_database_says_so_and_json_is_an_array() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    create_empty_database(&db);
    cargo_bin_cmd!("tracer")
        .args(["--db", db.to_str().unwrap(), "ls"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no traces recorded"));
    cargo_bin_cmd!("tracer")
        .args(["--db", db.to_str().unwrap(), "ls", "--hops"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no hops recorded"));
    for args in [&["ls", "--json"][..], &["ls", "--hops", "--json"]] {
        let output = cargo_bin_cmd!("tracer")
            .env("TRACER_DB", &db)
            .args(args)
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert!(json.as_array().unwrap().is_empty());
    }
}

#[test]
fn the_proxy_prints_its_route_table_records_and_stops_on_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let upstream = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let upstream_addr = upstream.local_addr().unwrap();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in upstream.incoming() {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let child = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["--db", db.to_str().unwrap(), "proxy", "--route"])
        .arg(format!("mcp:notes=127.0.0.1:{port}=http://{upstream_addr}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut answered = false;
    for _ in 0..100 {
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::{Read, Write};
            stream
                .write_all(b"GET /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut response = String::new();
            stream.read_to_string(&mut response).unwrap();
            answered = response.ends_with("ok");
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(answered, "the proxy forwarded the request");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("ROUTE") && stdout.contains("notes") && stdout.contains("mcp"),
        "{stdout}"
    );
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("1 hop written, 0 not written"), "{stderr}");
    let listing = cargo_bin_cmd!("tracer")
        .args(["--db", db.to_str().unwrap(), "ls", "--hops", "--json"])
        .output()
        .unwrap();
    let hops: serde_json::Value = serde_json::from_slice(&listing.stdout).unwrap();
    assert_eq!(hops[0]["path"], "/mcp");
    assert_eq!(hops[0]["status"], 200);
    assert!(hops[0]["id"].as_str().is_some());
    // The proxy grouped the hop into a trace before it stopped.
    assert!(hops[0]["trace_id"].as_str().is_some(), "{hops}");
}

#[test]
fn completions_cover_every_subcommand_and_load_in_bash() {
    for shell in ["bash", "zsh", "fish"] {
        let output = cargo_bin_cmd!("tracer")
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(output.status.success(), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        for subcommand in ["proxy", "serve-replay", "completions", "replay", "wrap"] {
            assert!(script.contains(subcommand), "{shell} lacks {subcommand}");
        }
    }
    // bash itself takes the script and registers the completion function.
    let loaded = Command::new("bash")
        .args([
            "-c",
            &format!(
                "source <({} completions bash) && complete -p tracer",
                env!("CARGO_BIN_EXE_tracer")
            ),
        ])
        .output()
        .unwrap();
    assert!(loaded.status.success());
    assert!(String::from_utf8_lossy(&loaded.stdout).contains("-F _tracer tracer"));
    // An unknown shell is a usage error.
    cargo_bin_cmd!("tracer")
        .args(["completions", "tcsh"])
        .assert()
        .code(2);
}

/// A tracer database with nothing recorded (reading commands do not create one).
fn create_empty_database(path: &std::path::Path) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        tracer_store::Store::open(path).await.unwrap().close().await;
    });
}
