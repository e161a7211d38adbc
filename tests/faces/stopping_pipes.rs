//! Stopping when stderr is a pipe nobody reads any more (`tracer up 2>&1 | tee up.log`, and the
//! Ctrl-C that killed tee first): SIGINT and SIGTERM still stop every long-running binary with
//! exit 0, and a second signal still cuts the grace period short.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
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

/// Starts `program` with stderr a pipe, waits until it accepts connections at `listen`, then
/// closes the pipe's reading end: from now on every write to its stderr fails.
fn start_then_close_stderr(program: &str, args: &[&str], dir: &Path, listen: SocketAddr) -> Child {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        // Logs on: every warning on the way out meets the closed pipe too.
        .env("RUST_LOG", "info")
        .env_remove("TRACER_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(listen).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "exited before listening"
        );
        assert!(Instant::now() < deadline, "nothing listens on {listen}");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(child.stderr.take());
    child
}

fn signal(child: &Child, sig: Signal) {
    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), sig).unwrap();
}

/// The exit code, or `None` when the child had to be killed after `limit`.
fn exit_code_within(mut child: Child, limit: Duration) -> Option<i32> {
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(limit).is_err() {
            let _ = kill(pid, Signal::SIGKILL);
        }
    });
    let status = child.wait().unwrap();
    let _ = done_tx.send(());
    watchdog.join().unwrap();
    status.code()
}

fn stops_with_stderr_closed(program: &str, args: &[&str], listen: SocketAddr, sig: Signal) {
    let dir = tempfile::tempdir().unwrap();
    let child = start_then_close_stderr(program, args, dir.path(), listen);
    signal(&child, sig);
    let code = exit_code_within(child, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{program} {args:?} on {sig}");
}

#[test]
fn tracer_proxy_stops_on_sigint_and_sigterm_with_stderr_closed() {
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        let listen = free_port();
        let route = format!("model={listen}=http://127.0.0.1:9");
        let args = ["--db", "t.db", "proxy", "--route", &route];
        stops_with_stderr_closed(TRACER, &args, listen, sig);
    }
}

#[test]
fn tracer_up_stops_on_sigint_and_sigterm_with_stderr_closed() {
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        let ports: Vec<String> = crate::free_ports::distinct_ports(5);
        let agent: SocketAddr = format!("127.0.0.1:{}", ports[0]).parse().unwrap();
        let args = [
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
        ];
        stops_with_stderr_closed(TRACER, &args, agent, sig);
    }
}

#[test]
fn notes_server_and_notes_agent_stop_on_sigint_and_sigterm_with_stderr_closed() {
    for program in [NOTES_SERVER, NOTES_AGENT] {
        for sig in [Signal::SIGINT, Signal::SIGTERM] {
            let listen = free_port();
            let args = ["--listen", &listen.to_string()];
            stops_with_stderr_closed(program, &args, listen, sig);
        }
    }
}

#[test]
fn a_second_ctrl_c_cuts_the_proxys_grace_short_with_stderr_closed() {
    let dir = tempfile::tempdir().unwrap();
    // An upstream that takes the request and never answers: the hop stays in flight.
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let upstream_addr = upstream.local_addr().unwrap();
    let (arrived_tx, arrived_rx) = mpsc::channel::<TcpStream>();
    std::thread::spawn(move || {
        let (mut stream, _) = upstream.accept().unwrap();
        let mut buffer = [0u8; 4096];
        let _ = stream.read(&mut buffer);
        let _ = arrived_tx.send(stream);
    });
    let listen = free_port();
    let route = format!("model={listen}=http://{upstream_addr}");
    let args = ["--db", "t.db", "proxy", "--route", &route];
    let proxy = start_then_close_stderr(TRACER, &args, dir.path(), listen);
    let mut client = TcpStream::connect(listen).unwrap();
    client
        .write_all(b"POST /api/chat HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        .unwrap();
    let _held = arrived_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    signal(&proxy, Signal::SIGINT);
    // The first Ctrl-C was heard once the listener is gone (connections are refused).
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(listen).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the first Ctrl-C was never heard"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&proxy, Signal::SIGINT);
    // The grace period is 30 s: only the second Ctrl-C can end the run before the watchdog.
    let code = exit_code_within(proxy, Duration::from_secs(25));
    assert_eq!(code, Some(0));
}
