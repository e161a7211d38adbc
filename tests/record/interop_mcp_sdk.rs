//! Interop with the official MCP Python SDK (`pip install mcp` into `.venv`): its unmodified
//! client lists the five tools and calls each one against the real notes-server binary, in both
//! eras, over Streamable HTTP (JSON and SSE answers) and over stdio.
//! Skips (saying why) when `.venv/bin/python` is missing, unless `TRACER_INTEROP=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::interop_peers;

use interop_peers::venv_python;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const SCRIPT: &str = "tests/interop/mcp_sdk_client.py";

/// Starts `notes-server --listen 127.0.0.1:0` and reads the bound URL from its log on stderr.
async fn start_http_server(dir: &tempfile::TempDir, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .args(["--listen", "127.0.0.1:0", "--file"])
        .arg(dir.path().join("db"))
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(start) = line.find("http://") {
                let url: String = line[start..]
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .collect();
                return url;
            }
        }
        panic!("notes-server exited before listening");
    })
    .await
    .expect("notes-server did not report its address");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

async fn run_client(python: &PathBuf, args: &[&str]) {
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        Command::new(python)
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(SCRIPT))
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the SDK client took over 120 s")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "SDK client {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.starts_with("ok: mcp "), "{stdout}");
    eprintln!("{}", stdout.trim());
}

#[tokio::test]
async fn sdk_client_over_streamable_http_json_and_sse() {
    let Some(python) = venv_python(".venv", "mcp", "mcp==2.3.0") else {
        return;
    };
    for extra in [&[][..], &["--sse"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let (_server, url) = start_http_server(&dir, extra).await;
        for mode in ["auto", "legacy"] {
            run_client(&python, &["--url", &url, "--mode", mode]).await;
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("db")).unwrap(),
            "",
            "the script clears at the end"
        );
    }
}

#[tokio::test]
async fn sdk_client_over_stdio() {
    let Some(python) = venv_python(".venv", "mcp", "mcp==2.3.0") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes/db");
    for mode in ["auto", "legacy"] {
        let binary = env!("CARGO_BIN_EXE_notes-server");
        run_client(
            &python,
            &[
                "--stdio",
                binary,
                "--file",
                file.to_str().unwrap(),
                "--mode",
                mode,
            ],
        )
        .await;
    }
    assert!(file.is_file());
}
