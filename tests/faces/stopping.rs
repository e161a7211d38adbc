//! How every long-running binary stops: SIGINT, SIGTERM and SIGHUP alike finish the work in
//! flight and exit 0; a second signal cuts the grace period short. And the one-line errors of
//! the three binaries, exact text.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

const TRACER: &str = env!("CARGO_BIN_EXE_tracer");
const NOTES_SERVER: &str = env!("CARGO_BIN_EXE_notes-server");
const NOTES_AGENT: &str = env!("CARGO_BIN_EXE_notes-agent");

fn free_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], crate::free_ports::free_port()))
}

/// Waits until something accepts connections at `addr`.
fn wait_listening(addr: SocketAddr, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(addr).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the process exited before listening"
        );
        assert!(Instant::now() < deadline, "nothing listens on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, signal: Signal) {
    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), signal).unwrap();
}

/// Waits for the child (killing it after `limit`) and returns its output and how long it took.
fn finish(child: Child, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(limit).is_err() {
            let _ = kill(pid, Signal::SIGKILL);
        }
    });
    let output = child.wait_with_output().unwrap();
    let _ = done_tx.send(());
    watchdog.join().unwrap();
    (output, started.elapsed())
}

fn spawn(program: &str, args: &[&str], dir: &Path) -> Child {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("RUST_LOG", "warn")
        .env_remove("TRACER_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts `program` listening on `listen`, sends it `signal` once it accepts connections, and
/// returns its stderr after checking it exited 0 within 30 s.
fn listens_then_stops(
    program: &str,
    args: &[&str],
    dir: &Path,
    listen: SocketAddr,
    sig: Signal,
) -> String {
    let mut child = spawn(program, args, dir);
    wait_listening(listen, &mut child);
    signal(&child, sig);
    let (output, _) = finish(child, Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    stderr
}

/// Serves one HTTP request slowly: answers only when `release` is sent (or never).
fn slow_upstream() -> (SocketAddr, mpsc::Sender<()>, mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (arrived_tx, arrived_rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buffer = [0u8; 4096];
        let _ = stream.read(&mut buffer);
        let _ = arrived_tx.send(());
        if release_rx.recv().is_ok() {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"ok\":true}",
            );
        }
        // Keep the socket open until the proxy is done with it.
        let _ = stream.read(&mut buffer);
    });
    (addr, release_tx, arrived_rx)
}

/// Sends one request through the proxy on its own thread; returns its raw answer later.
fn request_in_background(proxy: SocketAddr) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut stream = TcpStream::connect(proxy).unwrap();
        stream
            .write_all(b"POST /api/chat HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
            .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    })
}

/// A `tracer proxy` with one request waiting on a slow upstream: the proxy, its answer to come,
/// the switch that lets the upstream answer, and the folder that holds the database.
struct ProxyMidRequest {
    proxy: Child,
    answer: std::thread::JoinHandle<String>,
    release: mpsc::Sender<()>,
    _dir: tempfile::TempDir,
}

fn proxy_with_a_request_in_flight() -> ProxyMidRequest {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, release, arrived) = slow_upstream();
    let listen = free_port();
    let route = format!("model={listen}=http://{upstream}");
    let mut proxy = spawn(
        TRACER,
        &["--db", "t.db", "proxy", "--route", &route],
        dir.path(),
    );
    wait_listening(listen, &mut proxy);
    let answer = request_in_background(listen);
    arrived.recv_timeout(Duration::from_secs(30)).unwrap();
    ProxyMidRequest {
        proxy,
        answer,
        release,
        _dir: dir,
    }
}

#[test]
fn tracer_proxy_finishes_the_hop_in_flight_on_sigterm_and_exits_0() {
    let running = proxy_with_a_request_in_flight();
    signal(&running.proxy, Signal::SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    running.release.send(()).unwrap();
    let (output, _) = finish(running.proxy, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(running.answer.join().unwrap().ends_with("{\"ok\":true}"));
    assert!(
        stderr.contains("tracer: SIGTERM: finishing in-flight work"),
        "{stderr}"
    );
    // One hop, said in the singular.
    assert!(
        stderr.contains("; 1 hop written, 0 not written"),
        "{stderr}"
    );
}

#[test]
fn a_second_signal_cuts_the_proxys_grace_period_short() {
    let running = proxy_with_a_request_in_flight();
    let mut proxy = running.proxy;
    let stderr = StderrWatch::new(&mut proxy);
    signal(&proxy, Signal::SIGINT);
    // The second Ctrl-C only after the first was heard: two at once may arrive as one.
    stderr.wait_for(
        "tracer: Ctrl-C: finishing in-flight work",
        Duration::from_secs(30),
    );
    signal(&proxy, Signal::SIGINT);
    // The grace period is 30 s; the second Ctrl-C ends it now.
    let (output, took) = finish(proxy, Duration::from_secs(25));
    let stderr = stderr.all();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(took < Duration::from_secs(20), "took {took:?}: {stderr}");
    assert!(
        stderr.contains("tracer: Ctrl-C again: stopping now"),
        "{stderr}"
    );
    assert!(stderr.contains(", 1 connection cut off"), "{stderr}");
}

/// A child's stderr, read as it comes on a thread of its own.
struct StderrWatch {
    text: std::sync::Arc<std::sync::Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl StderrWatch {
    fn new(child: &mut Child) -> Self {
        let mut stderr = child.stderr.take().unwrap();
        let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = text.clone();
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buffer) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Self {
            text,
            reader: Some(reader),
        }
    }

    fn wait_for(&self, wanted: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.text.lock().unwrap().contains(wanted) {
            assert!(
                Instant::now() < deadline,
                "never said {wanted:?}: {}",
                self.text.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything it said, once the child has exited.
    fn all(mut self) -> String {
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        self.text.lock().unwrap().clone()
    }
}

#[test]
fn tracer_up_stops_on_sighup_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let ports: Vec<String> = crate::free_ports::distinct_ports(5);
    let agent: SocketAddr = format!("127.0.0.1:{}", ports[0]).parse().unwrap();
    let mut up = spawn(
        TRACER,
        &[
            "--db",
            "t.db",
            "up",
            "--recorded",
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
        ],
        dir.path(),
    );
    wait_listening(agent, &mut up);
    signal(&up, Signal::SIGHUP);
    let (output, _) = finish(up, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("tracer up: SIGHUP: finishing in-flight work"),
        "{stderr}"
    );
    assert!(stderr.contains("tracer up: stopped;"), "{stderr}");
}

#[test]
fn serve_replay_exits_0_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let listen = free_port();
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-traces/buy-milk.json");
    let args = ["serve-replay", sample, "--listen", &listen.to_string()];
    let stderr = listens_then_stops(TRACER, &args, dir.path(), listen, Signal::SIGTERM);
    assert!(
        stderr.contains("tracer serve-replay: SIGTERM: finishing"),
        "{stderr}"
    );
}

#[test]
fn notes_server_exits_0_on_sigterm_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    // A temp file a killed notes-server left (no process has this pid) is removed at start.
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let stale = dir.path().join("data/.db.2147483000.0.tmp");
    std::fs::write(&stale, "half a write").unwrap();
    let listen = free_port();
    let args = ["--listen", &listen.to_string()];
    let mut server = spawn(NOTES_SERVER, &args, dir.path());
    wait_listening(listen, &mut server);
    assert!(!stale.exists(), "the stale temp file is removed at start");
    signal(&server, Signal::SIGTERM);
    let (output, _) = finish(server, Duration::from_secs(30));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn notes_agent_exits_0_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let listen = free_port();
    let args = ["--listen", &listen.to_string()];
    let stderr = listens_then_stops(NOTES_AGENT, &args, dir.path(), listen, Signal::SIGTERM);
    assert!(
        stderr.contains("notes-agent: SIGTERM: finishing"),
        "{stderr}"
    );
}

#[test]
fn notes_agent_answers_the_request_in_flight_before_it_exits_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    // The agent's first call of a request (MCP tools/list) waits on an upstream held back.
    let (upstream, release, arrived) = slow_upstream();
    let listen = free_port();
    let mcp = format!("http://{upstream}/mcp");
    let args = [
        "--listen",
        &listen.to_string(),
        "--mcp",
        &mcp,
        "--model-url",
        "http://127.0.0.1:9",
    ];
    let mut agent = spawn(NOTES_AGENT, &args, dir.path());
    wait_listening(listen, &mut agent);
    let answer = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(listen).unwrap();
        stream
            .write_all(b"POST /agent HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 16\r\nconnection: close\r\n\r\n{\"message\":\"hi\"}")
            .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    });
    arrived.recv_timeout(Duration::from_secs(30)).unwrap();
    let stderr = StderrWatch::new(&mut agent);
    signal(&agent, Signal::SIGTERM);
    stderr.wait_for("notes-agent: SIGTERM: finishing", Duration::from_secs(30));
    // Stopping, the agent still has its request in flight: let the upstream answer.
    release.send(()).unwrap();
    let (output, _) = finish(agent, Duration::from_secs(60));
    let stderr = stderr.all();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let answer = answer.join().unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 "),
        "the request in flight got its answer: {answer:?}; {stderr}"
    );
}

#[test]
fn tracer_wrap_passes_sigterm_on_and_exits_as_its_server_does() {
    let dir = tempfile::tempdir().unwrap();
    // notes-server on stdio stops on SIGTERM with exit 0; wrap passes the signal and the code on.
    let mut wrap = Command::new(TRACER)
        .args(["--db", "t.db", "wrap", "--", NOTES_SERVER, "--stdio"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.path().join("data/db").exists() {
        assert!(
            Instant::now() < deadline,
            "notes-server never opened its notes file"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&wrap, Signal::SIGTERM);
    let stdin = wrap.stdin.take();
    let (output, _) = finish(wrap, Duration::from_secs(30));
    drop(stdin);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

#[test]
fn tracer_tui_restores_the_terminal_and_exits_0_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    // Reading commands refuse a missing database: record an empty one first.
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = tracer_store::Store::open(&dir.path().join("t.db"))
            .await
            .unwrap();
        store.close().await;
    });
    // `script` gives the TUI a terminal of its own; its exit status is the TUI's. `exec`, so that
    // no shell stands between them whatever `$SHELL` is.
    let command = format!("exec {TRACER} --db t.db tui");
    let mut tui = Command::new("script")
        .args(["-qefc", &command, "/dev/null"])
        .current_dir(dir.path())
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Signal the TUI process itself (not `script`), once it has a handler for SIGTERM.
    let pid = wait_for_child_catching_sigterm(tui.id(), Duration::from_secs(30));
    kill(pid, Signal::SIGTERM).unwrap();
    let stdin = tui.stdin.take();
    let (output, _) = finish(tui, Duration::from_secs(30));
    drop(stdin);
    let screen = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{screen}");
    // The alternate screen was entered and left again.
    assert!(screen.contains("\u{1b}[?1049h"), "{screen:?}");
    assert!(screen.contains("\u{1b}[?1049l"), "{screen:?}");
}

#[test]
fn the_three_binaries_say_what_failed_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/db")).unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_addr = taken.local_addr().unwrap().to_string();
    let taken_route = format!("model={taken_addr}=http://127.0.0.1:9");
    std::fs::write(dir.path().join("plain"), "x").unwrap();
    let cases: [(&str, Vec<&str>, String); 4] = [
        (
            NOTES_SERVER,
            vec![],
            "notes-server: cannot open the notes file data/db: it is a directory\n".to_string(),
        ),
        (
            NOTES_SERVER,
            vec!["--file", "plain/notes"],
            "notes-server: cannot open the notes file plain/notes: plain is a file, not a folder\n"
                .to_string(),
        ),
        (
            NOTES_AGENT,
            vec!["--listen", &taken_addr],
            format!(
                "notes-agent: cannot listen on {taken_addr}: Address already in use (os error 98)\n"
            ),
        ),
        (
            TRACER,
            vec!["proxy", "--route", &taken_route],
            format!(
                "tracer: route `model`: cannot listen on {taken_addr}: the port is in use \
                 (Address already in use (os error 98)); another program (or another tracer) has \
                 it: give the route another LISTEN in --route ROLE:NAME=LISTEN=UPSTREAM \
                 (127.0.0.1:0 takes a free port)\n"
            ),
        ),
    ];
    for (program, args, expected) in cases {
        let output = Command::new(program)
            .args(&args)
            .current_dir(dir.path())
            .env("RUST_BACKTRACE", "1")
            .env("RUST_LOG", "off")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr, expected, "{program} {args:?}");
        assert_eq!(output.status.code(), Some(1), "{program} {args:?}");
    }
    // Usage mistakes exit 2.
    for program in [TRACER, NOTES_SERVER, NOTES_AGENT] {
        let output = Command::new(program)
            .arg("--no-such-flag")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{program}");
    }
    // So is a flag's value that cannot work.
    let output = Command::new(NOTES_AGENT)
        .args(["--mcp", "notaurl"])
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "notes-agent: --mcp `notaurl` is not a usable URL: it must start with http://\n"
    );
}

/// The child of `parent` running tracer's binary, once it catches SIGTERM (per /proc's `SigCgt`).
fn wait_for_child_catching_sigterm(parent: u32, limit: Duration) -> Pid {
    let tracer = std::fs::canonicalize(TRACER).unwrap();
    let deadline = Instant::now() + limit;
    loop {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        for child in children.split_whitespace() {
            let exe = std::fs::read_link(format!("/proc/{child}/exe")).ok();
            let status =
                std::fs::read_to_string(format!("/proc/{child}/status")).unwrap_or_default();
            let caught = status
                .lines()
                .find_map(|line| line.strip_prefix("SigCgt:"))
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
                .unwrap_or(0);
            let sigterm_bit = 1u64 << (Signal::SIGTERM as u64 - 1);
            if exe.as_deref() == Some(tracer.as_path()) && caught & sigterm_bit != 0 {
                return Pid::from_raw(child.parse().unwrap());
            }
        }
        assert!(
            Instant::now() < deadline,
            "the TUI never started listening for SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
