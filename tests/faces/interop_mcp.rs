//! Interop: the official MCP Python SDK (tests/interop/mcp_sdk_tracer_client.py) lists and calls
//! every tool of `tracer mcp` on a database of the sample traces, over stdio and over Streamable
//! HTTP, in both protocol eras (2026-07-28 discovery and the legacy initialize handshake).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::interop_peers::venv_python;
use crate::sample_db::{TRACER, sample_db};

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/mcp_sdk_tracer_client.py")
}

fn run_client(python: &Path, args: &[&str]) {
    let output = Command::new(python)
        .arg(client_script())
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the MCP SDK client failed ({args:?}):\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn interop_mcp_sdk_over_stdio() {
    let Some(python) = venv_python(".venv", "mcp", "mcp") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let db = db.to_str().unwrap();
    for mode in ["auto", "legacy"] {
        run_client(&python, &["--tracer", TRACER, "--db", db, "--mode", mode]);
    }
}

/// `tracer mcp --listen 127.0.0.1:0` and the URL it printed; stopped with SIGTERM on drop.
struct HttpServer {
    child: Child,
    /// Kept open: the server says on stderr that it stops.
    stderr: BufReader<std::process::ChildStderr>,
    url: String,
}

impl HttpServer {
    fn start(db: &Path) -> Self {
        let mut child = Command::new(TRACER)
            .arg("--db")
            .arg(db)
            .args(["mcp", "--listen", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        stderr.read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .trim_end_matches(';')
            .to_owned();
        assert!(line.contains("(read-only)"), "{line}");
        HttpServer { child, stderr, url }
    }

    fn stop(mut self) -> std::process::ExitStatus {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stderr, &mut rest).unwrap();
        assert!(
            rest.contains("tracer mcp: SIGTERM: finishing in-flight work"),
            "{rest}"
        );
        self.child.wait().unwrap()
    }
}

#[test]
fn interop_mcp_sdk_over_streamable_http() {
    let Some(python) = venv_python(".venv", "mcp", "mcp") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let server = HttpServer::start(&db);
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    for mode in ["auto", "legacy"] {
        run_client(&python, &["--url", &server.url, "--mode", mode]);
    }
    assert!(server.stop().success(), "SIGTERM stops tracer mcp with 0");
}
