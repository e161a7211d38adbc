//! A listener other machines can reach gets a warning line on stderr: a `--route` or `--forward`
//! of `tracer proxy` (an open, unauthenticated proxy), `tracer mcp --listen` (an open trace
//! reader), `tracer up --host`. Loopback listeners get none.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

const TRACER: &str = env!("CARGO_BIN_EXE_tracer");

fn free_port() -> u16 {
    crate::free_ports::free_port()
}

/// Runs tracer until it prints `ready` (on stdout, or on stderr when `on_stderr`), stops it with
/// SIGTERM and returns everything it wrote to stderr.
fn stderr_of(args: &[&str], ready: &str, on_stderr: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    // `tracer mcp` reads an existing database only.
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = tracer_store::Store::open(&dir.path().join("t.db"))
            .await
            .unwrap();
        store.close().await;
    });
    let mut child = Command::new(TRACER)
        .args(["--db", "t.db"])
        .args(args)
        .current_dir(dir.path())
        .env("RUST_LOG", "off")
        .env("TRACER_CA_DIR", dir.path().join("ca"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let (said, mut other): (Box<dyn Read + Send>, Box<dyn Read + Send>) = if on_stderr {
        (Box::new(stderr), Box::new(stdout))
    } else {
        (Box::new(stdout), Box::new(stderr))
    };
    // The other stream is read on its own thread, so that neither pipe fills up.
    let other_text = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = other.read_to_string(&mut text);
        text
    });
    let mut lines = BufReader::new(said);
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = lines.read_line(&mut line).unwrap();
        assert!(n > 0, "exited before saying {ready:?}: {seen}");
        seen.push_str(&line);
        if line.contains(ready) {
            break;
        }
    }
    kill(
        Pid::from_raw(i32::try_from(child.id()).unwrap()),
        Signal::SIGTERM,
    )
    .unwrap();
    let mut rest = String::new();
    let _ = lines.read_to_string(&mut rest);
    seen.push_str(&rest);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let other = other_text.join().unwrap();
    if on_stderr { seen } else { other }
}

fn warnings(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("warning:")).collect()
}

#[test]
fn proxy_routes_and_the_forward_proxy_warn_when_others_can_reach_them() {
    let (open, closed, forward) = (free_port(), free_port(), free_port());
    let open_route = format!("model:wide=0.0.0.0:{open}=http://127.0.0.1:9");
    let closed_route = format!("mcp:narrow=127.0.0.1:{closed}=http://127.0.0.1:9");
    let forward = format!("0.0.0.0:{forward}");
    let args = [
        "proxy",
        "--route",
        &open_route,
        "--route",
        &closed_route,
        "--forward",
        &forward,
    ];
    let stderr = stderr_of(&args, "Ctrl-C to stop.", false);
    let found = warnings(&stderr);
    assert_eq!(found.len(), 2, "{stderr}");
    assert!(
        found[0].starts_with(&format!(
            "tracer: warning: route `wide` listens on 0.0.0.0:{open}, not a loopback address"
        )),
        "{stderr}"
    );
    assert!(found[0].contains("unauthenticated"), "{stderr}");
    assert!(
        found[1].starts_with(&format!(
            "tracer: warning: the forward proxy listens on {forward}, not a loopback address"
        )),
        "{stderr}"
    );
    assert!(found[1].contains("open proxy"), "{stderr}");
}

#[test]
fn loopback_routes_get_no_warning() {
    let port = free_port();
    let route = format!("model=127.0.0.1:{port}=http://127.0.0.1:9");
    let v6 = format!("mcp=[::1]:{}=http://127.0.0.1:9", free_port());
    let mut args = vec!["proxy", "--route", &route];
    // Where the machine has IPv6 loopback, [::1] is loopback too.
    if std::net::TcpListener::bind("[::1]:0").is_ok() {
        args.extend(["--route", &v6]);
    }
    let stderr = stderr_of(&args, "Ctrl-C to stop.", false);
    assert!(warnings(&stderr).is_empty(), "{stderr}");
}

#[test]
fn tracer_mcp_warns_when_others_can_read_the_traces() {
    let open = format!("0.0.0.0:{}", free_port());
    let stderr = stderr_of(&["mcp", "--listen", &open], "Ctrl-C stops", true);
    let found = warnings(&stderr);
    assert_eq!(found.len(), 1, "{stderr}");
    assert!(
        found[0].starts_with(&format!(
            "tracer mcp: warning: listening on {open}, not a loopback address"
        )),
        "{stderr}"
    );
    assert!(found[0].contains("read every recorded trace"), "{stderr}");
    let closed = format!("127.0.0.1:{}", free_port());
    let stderr = stderr_of(&["mcp", "--listen", &closed], "Ctrl-C stops", true);
    assert!(warnings(&stderr).is_empty(), "{stderr}");
}

#[test]
fn tracer_up_on_a_reachable_host_warns() {
    let ports: Vec<String> = crate::free_ports::distinct_ports(5);
    let args = [
        "up",
        "--recorded",
        "--host",
        "0.0.0.0",
        "--agent-port",
        &ports[0],
        "--mcp-port",
        &ports[1],
        "--model-port",
        &ports[2],
        "--agent-internal-port",
        &ports[3],
        "--mcp-internal-port",
        &ports[4],
        "--notes",
        "notes.txt",
    ];
    let stderr = stderr_of(&args, "Ctrl-C to stop.", false);
    let found = warnings(&stderr);
    assert_eq!(found.len(), 1, "{stderr}");
    assert!(
        found[0].starts_with("tracer up: warning: listening on 0.0.0.0, not a loopback address"),
        "{stderr}"
    );
}
