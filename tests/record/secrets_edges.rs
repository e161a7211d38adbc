//! Secrets on the other ways in: the `tracer proxy` banner and routes table with credentials in
//! a route and in `--otlp`, an absolute-form forward-proxy request with userinfo, and a wrapped
//! stdio server's JSON-RPC lines (redacted unless `--no-redact`, passed on untouched).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tracer_record::ca::CertAuthority;
use tracer_record::proxy::forward_roles::parse_patterns;
use tracer_record::proxy::{ForwardSettings, Proxy, ProxySettings};
use tracer_store::{Recorder, Store};

fn assert_no_secret(text: &str, what: &str) {
    assert!(!text.contains("SECRET"), "{what} holds a secret:\n{text}");
}

#[test]
fn the_banner_and_the_routes_table_never_show_url_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["--db", db.to_str().unwrap(), "proxy"])
        .args([
            "--route",
            "model=127.0.0.1:0=http://user:SECRET-route@127.0.0.1:9/v1",
        ])
        .args([
            "--route",
            "other:wide=0.0.0.0:0=http://user:SECRET-wide@127.0.0.1:9",
        ])
        .args(["--otlp", "http://collector:SECRET-otlp@127.0.0.1:9"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut shown = String::new();
    // The table is printed once the routes listen; its model row names the upstream.
    while !shown.contains("127.0.0.1:9/v1") {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "no route table: {shown}"
        );
        shown.push_str(&line);
    }
    assert!(
        shown.contains("http://[redacted]@127.0.0.1:9/v1"),
        "{shown}"
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    stdout.read_to_string(&mut shown).unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut shown)
        .unwrap();
    assert!(shown.contains("http://127.0.0.1:9/v1/traces"), "{shown}");
    assert!(
        shown.contains("route `wide` listens on 0.0.0.0")
            && shown.contains("to http://[redacted]@127.0.0.1:9/ unauthenticated"),
        "the open-listener warning names the upstream without credentials: {shown}"
    );
    assert_no_secret(&shown, "what tracer printed");
    // Nothing beside the database (the routes table, the journal) holds it either.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !bytes.windows(6).any(|w| w == b"SECRET"),
            "{} holds a secret",
            path.display()
        );
    }
    let bytes = std::fs::read(&db).unwrap();
    assert!(
        bytes.windows(21).any(|w| w == b"http://[redacted]@127"),
        "the routes table names the upstream redacted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absolute_form_request_with_userinfo_is_recorded_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tracer.db")).await.unwrap();
    let (ca, _) = CertAuthority::load_or_create(&dir.path().join("ca")).unwrap();
    let upstream = super::https_support::plain_upstream(|request| async move {
        let target = request.uri().to_string();
        http::Response::new(super::https_support::full(target))
    })
    .await;
    let proxy = Proxy::bind(Vec::new(), ProxySettings::default())
        .await
        .unwrap()
        .with_forward(ForwardSettings {
            listen: "127.0.0.1:0".parse().unwrap(),
            intercept: parse_patterns("only.example.test").unwrap(),
            host_roles: Vec::new(),
            ca: Arc::new(ca),
            limits: tracer_record::proxy::ForwardLimits::default(),
            identify_clients: true,
        })
        .await
        .unwrap();
    let forward = proxy.forward_addr().unwrap();
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(recorder, async move {
        let _ = stopped.await;
    }));
    let mut raw = TcpStream::connect(forward).await.unwrap();
    let ask = format!(
        "GET http://user:SECRET-fwd@{upstream}/p?token=SECRET-tok&q=1 HTTP/1.1\r\nHost: {upstream}\r\n\
         Proxy-Authorization: Basic SECRET-proxy\r\nconnection: close\r\n\r\n"
    );
    raw.write_all(ask.as_bytes()).await.unwrap();
    let mut answer = String::new();
    raw.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.ends_with("/p?token=SECRET-tok&q=1"),
        "the upstream got the query: {answer}"
    );
    let hops = super::proxy::harness::settled_hops(&store, 1).await;
    let start = &hops[0].start;
    assert_eq!(
        start.url,
        format!("http://[redacted]@{upstream}/p?token=[redacted]&q=1")
    );
    let headers: Vec<String> = start
        .request_headers
        .iter()
        .map(|h| format!("{}: {}", h.name, String::from_utf8_lossy(&h.value)))
        .collect();
    assert_no_secret(
        &format!("{} {} {headers:?}", start.path, start.url),
        "the hop",
    );
    let _ = stop.send(());
    run.await.unwrap();
    writer.await.unwrap();
}

/// Runs `tracer wrap -- cat` (it echoes each line, so every line is seen both ways), sends
/// `lines`, and returns what came out.
fn wrap_cat(db: &std::path::Path, extra: &[&str], lines: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["--db", db.to_str().unwrap(), "wrap", "--name", "cat"])
        .args(extra)
        .args(["--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    out
}

const STDIO_LINES: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"user":"ann","password":"SECRET-pw"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"access_token":"SECRET-at","expires_in":60}}}"#,
    "\n",
);

#[test]
fn wrapped_stdio_lines_are_redacted_in_the_record_and_passed_on_untouched() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (extra, redacted) in [(&[][..], true), (&["--no-redact"][..], false)] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("tracer.db");
        assert_eq!(
            wrap_cat(&db, extra, STDIO_LINES),
            STDIO_LINES,
            "bytes pass untouched"
        );
        let bodies = runtime.block_on(async {
            let store = Store::open(&db).await.unwrap();
            let hops = store.all_hops().await.unwrap();
            // How the echoes pair up depends on which pipe is read first; every line is kept.
            assert!(hops.len() >= 2, "{} hops", hops.len());
            hops.iter()
                .flat_map(|h| [&h.end.request_body.bytes, &h.end.response_body.bytes])
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect::<Vec<_>>()
                .join("\n")
        });
        if redacted {
            assert_no_secret(&bodies, "the wrapped server's record");
            assert!(bodies.contains(r#""password":"[redacted]""#), "{bodies}");
            assert!(bodies.contains(r#""user":"ann""#), "{bodies}");
        } else {
            assert!(
                bodies.contains("SECRET-pw") && bodies.contains("SECRET-at"),
                "{bodies}"
            );
        }
    }
}

/// `tracer up --recorded` (with `extra` flags) asked once with an API key; returns the agent
/// hop's stored `x-api-key` once tracer has stopped.
async fn up_records_key(extra: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let ports: Vec<String> = crate::free_ports::distinct_ports(5);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["--db", db.to_str().unwrap(), "up", "--recorded"])
        .args(["--agent-port", &ports[0], "--mcp-port", &ports[1]])
        .args([
            "--model-port",
            &ports[2],
            "--agent-internal-port",
            &ports[3],
        ])
        .args(["--mcp-internal-port", &ports[4]])
        .args(["--notes", dir.path().join("notes.txt").to_str().unwrap()])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The curl line is printed once everything listens.
    while !lines
        .next()
        .unwrap()
        .unwrap()
        .trim_start()
        .starts_with("curl ")
    {}
    std::thread::spawn(move || lines.for_each(drop));
    let request = http::Request::post(format!("http://127.0.0.1:{}/agent", ports[0]))
        .header("content-type", "application/json")
        .header("x-api-key", "SECRET-up")
        .body(super::proxy::harness::full(
            r#"{"message":"Add buy milk to my notes"}"#,
        ))
        .unwrap();
    let response = super::proxy::harness::client()
        .request(request)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(child.wait().unwrap().success());
    let store = Store::open(&db).await.unwrap();
    let hops = store.all_hops().await.unwrap();
    let agent = hops
        .iter()
        .find(|h| h.start.role == tracer_wire::hop::Role::Agent)
        .unwrap();
    super::proxy::harness::header(&agent.start.request_headers, "x-api-key")
        .unwrap()
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracer_up_redacts_unless_no_redact() {
    assert_eq!(up_records_key(&[]).await, b"[redacted]");
    assert_eq!(up_records_key(&["--no-redact"]).await, b"SECRET-up");
}

#[test]
fn tracer_demo_takes_no_redact() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["demo", "--recorded", "--no-redact", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
