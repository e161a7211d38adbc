//! Log lines on a pipe: no colour codes (stderr is not a terminal), and a failure is one line
//! even when the peer answers with a multi-line error page (the OTLP push warning, notes-agent's
//! upstream warning), and `tracer up` with a taken port says only that. On a terminal (under
//! `script`) there is colour, unless `NO_COLOR` is set.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::sample_db::{BUY_MILK, TRACER};

const NOTES_AGENT: &str = env!("CARGO_BIN_EXE_notes-agent");

/// An error page over several lines, with a terminal code in it.
const ERROR_PAGE: &str =
    "<html>\n<head><title>bad gateway</title></head>\n<body>\u{1b}[2J down</body>\n</html>\n";

/// A server that answers every request with `status` and [`ERROR_PAGE`], then closes.
fn error_page_server(status: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || answer(stream, status));
        }
    });
    addr
}

fn answer(stream: TcpStream, status: &str) {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{ERROR_PAGE}",
        ERROR_PAGE.len()
    );
    let _ = reader.get_mut().write_all(reply.as_bytes());
}

/// Fails on a colour code, or on a line of the error page standing as a line of its own.
#[track_caller]
fn assert_plain_lines(stderr: &str) {
    assert!(
        !stderr.contains('\u{1b}'),
        "an escape on a pipe:\n{stderr:?}"
    );
    for line in stderr.lines() {
        assert!(
            !line.starts_with('<'),
            "the error page broke the line:\n{stderr}"
        );
    }
}

#[tokio::test]
async fn a_refused_otlp_push_is_one_plain_warning_and_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::sample_db::sample_db(dir.path());
    let receiver = error_page_server("400 Bad Request");
    let output = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["export", BUY_MILK, "-f", "otlp", "--push"])
        .arg(format!("http://{receiver}"))
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_plain_lines(&stderr);
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains(" WARN ")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("<head><title>bad gateway</title></head> <body>\\x1b[2J down"),
        "{stderr}"
    );
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("tracer export:"))
        .collect();
    assert_eq!(said.len(), 1, "one line for the failure:\n{stderr}");
    assert!(said[0].contains("run the same command again"), "{stderr}");
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
}

#[test]
fn notes_agent_logs_a_failing_model_on_one_plain_line() {
    let model = error_page_server("502 Bad Gateway");
    let listen = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut agent = Command::new(NOTES_AGENT)
        .args(["--listen", &listen.to_string()])
        .arg("--model-url")
        .arg(format!("http://{model}"))
        .arg("--mcp")
        .arg(format!("http://{model}/mcp"))
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut stream = loop {
        match TcpStream::connect(listen) {
            Ok(stream) => break stream,
            Err(_) => {
                assert!(agent.try_wait().unwrap().is_none(), "notes-agent exited");
                assert!(Instant::now() < deadline, "notes-agent never listened");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    let body = r#"{"message":"hello"}"#;
    write!(
        stream,
        "POST /agent HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The answer comes after the warning is written.
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 502"), "{reply}");
    kill(
        Pid::from_raw(i32::try_from(agent.id()).unwrap()),
        Signal::SIGTERM,
    )
    .unwrap();
    let output = agent.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_plain_lines(&stderr);
    let warning = stderr
        .lines()
        .find(|l| l.contains("upstream failed"))
        .unwrap_or_else(|| panic!("no warning:\n{stderr}"));
    assert!(warning.contains("</head> <body>\\x1b[2J down"), "{stderr}");
}

#[test]
fn tracer_up_with_a_taken_port_says_only_that() {
    let dir = tempfile::tempdir().unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let output = Command::new(TRACER)
        .arg("--db")
        .arg(dir.path().join("t.db"))
        .args(["up", "--recorded", "--agent-port", &port])
        .args(["--mcp-port", "0", "--model-port", "0"])
        .args(["--agent-internal-port", "0", "--mcp-internal-port", "0"])
        .arg("--notes")
        .arg(dir.path().join("notes"))
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "tracer: route `agent`: cannot listen on 127.0.0.1:{port}: the port is in use \
             (Address already in use (os error 98)); another program (or another tracer) has it: \
             give --agent-port another port\n"
        )
    );
}

/// `tracer export --push` to a refusing receiver under `script`, which gives it a terminal; what
/// the terminal showed.
fn push_on_a_terminal(no_color: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::sample_db::sample_db(dir.path());
    let receiver = error_page_server("400 Bad Request");
    let command = format!(
        "exec {TRACER} --db {} export {BUY_MILK} -f otlp --push http://{receiver}",
        db.display()
    );
    let mut script = Command::new("script");
    script
        .args(["-qefc", &command, "/dev/null"])
        .env("TERM", "xterm")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    if let Some(value) = no_color {
        script.env("NO_COLOR", value);
    }
    let output = script.output().unwrap();
    let shown = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(shown.contains("OTLP export failed"), "{shown:?}");
    shown
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    assert!(
        push_on_a_terminal(None).contains("\u{1b}["),
        "colour on a terminal"
    );
    assert!(
        push_on_a_terminal(Some("")).contains("\u{1b}["),
        "an empty NO_COLOR is unset"
    );
    let plain = push_on_a_terminal(Some("1"));
    assert!(!plain.contains('\u{1b}'), "NO_COLOR=1: {plain:?}");
}
