//! Interop: the whole MCP tour, live. The MCP Python SDK client (`.venv`, `mcp==2.3.0`) drives
//! `@modelcontextprotocol/server-everything` (npm, pinned, installed by scripts/test into
//! target/mcp-tour) through every feature (tests/interop/mcp_tour.py), over stdio through
//! `tracer wrap` and over Streamable HTTP through a `tracer proxy` mcp route, logging every
//! message it sends and receives. On both transports the JSON-RPC messages tracer shows are
//! exactly those: as many, of the same kinds, each the same way.
//! Skips (saying why) when a peer is missing, unless `TRACER_INTEROP=1`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::interop_peers::venv_python;
use crate::mcp_tour::{Tour, client_log_of, counted};

const SCRIPT: &str = "tests/interop/mcp_tour.py";

/// `server-everything`'s entry point as scripts/test installs it (or `TRACER_MCP_TOUR_DIR`).
fn server_everything() -> Option<PathBuf> {
    let dir = std::env::var_os("TRACER_MCP_TOUR_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-tour"));
    let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if entry.is_file() && node {
        return Some(entry);
    }
    let message = format!(
        "no server-everything at {} (or no node); run `bash scripts/test` (it installs it)",
        entry.display()
    );
    assert!(
        std::env::var("TRACER_INTEROP").as_deref() != Ok("1"),
        "TRACER_INTEROP=1 but {message}"
    );
    eprintln!("skipping an interop test: {message}");
    None
}

fn free_port() -> u16 {
    crate::free_ports::free_port()
}

async fn run_tour(python: &Path, log: &Path, target: &[String]) {
    let output = tokio::time::timeout(
        Duration::from_secs(180),
        Command::new(python)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(SCRIPT))
            .arg("--log")
            .arg(log)
            .args(target)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the tour took over 180 s")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.starts_with("ok: "),
        "the tour failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn tracer(db: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// Every JSON-RPC message tracer shows across the database's traces.
fn shown(db: &Path) -> Vec<(String, String)> {
    let listed: serde_json::Value = serde_json::from_str(&tracer(db, &["ls", "--json"])).unwrap();
    let mut out = Vec::new();
    for trace in listed.as_array().unwrap() {
        let id = trace["id"].as_str().unwrap();
        let log = tracer(db, &["show", id, "--json"]);
        out.extend(Tour::of_hop_log(log.as_bytes()).json_rpc());
    }
    out
}

fn assert_same(transport: &str, shown: &[(String, String)], logged: &[(String, String)]) {
    assert_eq!(
        shown.len(),
        logged.len(),
        "{transport}: tracer shows {} messages, the client logged {}",
        shown.len(),
        logged.len()
    );
    assert_eq!(counted(shown), counted(logged), "{transport}");
    eprintln!(
        "{transport}: {} messages shown, {} logged",
        shown.len(),
        logged.len()
    );
}

#[tokio::test]
async fn the_whole_tour_through_wrap_shows_every_message_the_client_logged() {
    let Some(python) = venv_python(".venv", "mcp", "mcp==2.3.0") else {
        return;
    };
    let Some(server) = server_everything() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let log = dir.path().join("client.ndjson");
    let command: Vec<String> = [
        "--stdio",
        env!("CARGO_BIN_EXE_tracer"),
        "--db",
        db.to_str().unwrap(),
        "wrap",
        "--name",
        "everything",
        "--",
        "node",
        server.to_str().unwrap(),
        "stdio",
    ]
    .map(str::to_string)
    .to_vec();
    run_tour(&python, &log, &command).await;
    let logged = client_log_of(&std::fs::read_to_string(&log).unwrap());
    assert_same("stdio", &shown(&db), &logged);
}

#[tokio::test]
async fn the_whole_tour_through_a_route_shows_every_message_the_client_logged() {
    let Some(python) = venv_python(".venv", "mcp", "mcp==2.3.0") else {
        return;
    };
    let Some(server) = server_everything() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let log = dir.path().join("client.ndjson");
    let (server_port, route_port) = (free_port(), free_port());
    let _server = Command::new("node")
        .arg(&server)
        .arg("streamableHttp")
        .env("PORT", server_port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .arg("proxy")
        .args([
            "--route",
            &format!("mcp:everything=127.0.0.1:{route_port}=http://127.0.0.1:{server_port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for port in [server_port, route_port] {
        let mut up = false;
        for _ in 0..400 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                up = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(up, "nothing listens on {port}");
    }
    let url = format!("http://127.0.0.1:{route_port}/mcp");
    run_tour(&python, &log, &["--url".to_string(), url]).await;
    // SIGINT: the proxy writes its last hops and leaves.
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(proxy.wait().await.unwrap().success());
    let logged = client_log_of(&std::fs::read_to_string(&log).unwrap());
    assert_same("http", &shown(&db), &logged);
}
