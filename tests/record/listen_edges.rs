//! Listen addresses: `localhost:PORT` is loopback wherever tracer listens (`--route`,
//! `--forward`, `tracer up --host`), and a port already in use names the flag that moves it
//! (`tracer proxy --route` / `--forward`, `tracer run --route`, `tracer up`).

use std::path::Path;
use std::process::{Command, Output};

use super::https_support::TracerProcess;

fn tracer(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracer"))
        .current_dir(dir)
        .env("TRACER_CA_DIR", dir.join("ca"))
        .env_remove("TRACER_DB")
        .arg("--db")
        .arg(dir.join("tracer.db"))
        .args(args)
        .output()
        .unwrap()
}

/// The command failed, and its stderr says all of `words`.
fn refused_with(output: &Output, words: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    for word in words {
        assert!(stderr.contains(word), "`{word}` not in: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn localhost_is_a_listen_address() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "proxy",
        "--route",
        "model:m=localhost:0=http://127.0.0.1:9",
        "--forward",
        "localhost:0",
        "--ca-dir",
    ];
    let ca = dir.path().join("ca").display().to_string();
    let args: Vec<&str> = args.into_iter().chain([ca.as_str()]).collect();
    let proxy = TracerProcess::spawn(&dir.path().join("tracer.db"), &args, &[], 4);
    for name in ["m", "forward"] {
        let addr = proxy.listen_of(name);
        assert!(
            addr.ip().is_loopback() && addr.port() != 0,
            "{name}: {addr}"
        );
        std::net::TcpStream::connect(addr).expect("it listens there");
    }
    proxy.stop();
}

#[test]
fn a_port_in_use_names_the_flag_that_moves_it() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let route = format!("model:m={addr}=http://127.0.0.1:9");
    let in_use = format!("cannot listen on {addr}: the port is in use");

    let output = tracer(dir.path(), &["proxy", "--route", &route]);
    refused_with(
        &output,
        &[&in_use, "route `m`", "--route ROLE:NAME=LISTEN=UPSTREAM"],
    );
    let output = tracer(dir.path(), &["proxy", "--forward", &addr.to_string()]);
    refused_with(&output, &[&in_use, "give --forward another ADDR"]);
    let output = tracer(dir.path(), &["run", "--route", &route, "--", "true"]);
    refused_with(&output, &[&in_use, "--route ROLE:NAME=LISTEN=UPSTREAM"]);

    let port = addr.port().to_string();
    let notes = dir.path().join("notes.txt").display().to_string();
    let mut up = vec!["up", "--recorded", "--notes", &notes, "--host", "localhost"];
    for flag in [
        "--mcp-port",
        "--model-port",
        "--mcp-internal-port",
        "--agent-internal-port",
    ] {
        up.extend([flag, "0"]);
    }
    let output = tracer(dir.path(), &[&up[..], &["--agent-port", &port]].concat());
    refused_with(&output, &[&in_use, "give --agent-port another port"]);
    drop(taken);
}
