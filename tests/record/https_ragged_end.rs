//! An HTTPS upstream that ends its answer by closing TCP without a TLS `close_notify` (a raw
//! socket server): a close-delimited SSE body through `message_stop` is complete, with a note,
//! and Python's urllib reads it whole through both the reverse route and the forward proxy; so
//! is a chunked one whose last chunk never came after `message_stop`; a body cut mid-event,
//! short of its Content-Length or a chunked one cut mid-event is failed, in words that match
//! what the client got, and the explanation does not claim a 502.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tracer_store::hops::StoredHop;
use tracer_wire::hop::HopState;

use super::https_support::{HOST, TestPki, TracerProcess, hops_in, server_config};

const SSE: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello there\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n\n",
);

const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n";

/// Where the cut body stops: inside the text delta's data line.
fn cut_at() -> usize {
    SSE.find("Hello there").unwrap() + 5
}

/// What the raw upstream sends for `path`, before it closes TCP without close_notify.
fn answer_for(path: &str) -> Vec<u8> {
    match path {
        "/v1/cut" => [SSE_HEAD.as_bytes(), &SSE.as_bytes()[..cut_at()]].concat(),
        "/v1/short" => {
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";
            let body = format!("{{\"id\":\"x\",\"pad\":\"{}", "a".repeat(300 - 17));
            assert_eq!(body.len(), 300);
            [head.as_bytes(), body.as_bytes()].concat()
        }
        // Chunked, and the last (empty) chunk never comes: after message_stop, or mid-event.
        "/v1/chunked-open" => chunked(SSE.as_bytes()),
        "/v1/chunked-cut" => chunked(&SSE.as_bytes()[..cut_at()]),
        _ => [SSE_HEAD.as_bytes(), SSE.as_bytes()].concat(),
    }
}

/// A chunked SSE head and `body` as one chunk, without the last chunk that ends the body.
fn chunked(body: &[u8]) -> Vec<u8> {
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    let size = format!("{:x}\r\n", body.len());
    [head.as_bytes(), size.as_bytes(), body, b"\r\n"].concat()
}

/// A TLS server on raw sockets: reads one request, writes the scripted answer, then closes
/// the TCP connection with no close_notify.
async fn ragged_upstream(pki: &TestPki) -> SocketAddr {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config(pki, &["http/1.1"])));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(stream).await else {
                    return;
                };
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                let head_end = loop {
                    if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                    match tls.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&request[..head_end]).to_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length:"))
                    .and_then(|value| value.trim().parse().ok())
                    .unwrap_or(0);
                while request.len() < head_end + length {
                    match tls.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let _ = tls.write_all(&answer_for(&path)).await;
                let _ = tls.flush().await;
                // TCP closes here; TLS never said close_notify.
                let (tcp, _session) = tls.into_inner();
                drop(tcp);
            });
        }
    });
    addr
}

/// What Python's urllib read: (bytes read, the error it raised, if any).
fn urllib(url: &str, proxy: Option<&str>, cafile: Option<&Path>) -> (usize, Option<String>) {
    urllib_by(None, url, proxy, cafile)
}

/// Runs a command another way (under `tracer run`).
type Runner<'a> = dyn Fn(&[&str]) -> std::process::Output + 'a;

/// `urllib`, run as `runner` runs a command (e.g. under `tracer run`), else directly.
fn urllib_by(
    runner: Option<&Runner<'_>>,
    url: &str,
    proxy: Option<&str>,
    cafile: Option<&Path>,
) -> (usize, Option<String>) {
    const SCRIPT: &str = r#"
import http.client, json, ssl, sys, urllib.request
url, proxy, cafile = sys.argv[1], sys.argv[2], sys.argv[3]
handlers = [] if proxy == "env" else [urllib.request.ProxyHandler({"https": proxy, "http": proxy} if proxy else {})]
if cafile:
    handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=cafile)))
body = b'{"model":"claude-test","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}'
request = urllib.request.Request(url, data=body, headers={"content-type": "application/json", "anthropic-version": "2023-06-01"})
try:
    read = urllib.request.build_opener(*handlers).open(request, timeout=20).read()
    print(json.dumps({"read": len(read), "error": None}))
except http.client.IncompleteRead as error:
    print(json.dumps({"read": len(error.partial), "error": repr(error)}))
"#;
    let cafile = cafile.map(|p| p.display().to_string()).unwrap_or_default();
    let args = ["python3", "-c", SCRIPT, url, proxy.unwrap_or(""), &cafile];
    let output = match runner {
        None => Command::new("python3").args(&args[1..]).output().unwrap(),
        Some(run) => run(&args),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "urllib: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (
        result["read"].as_u64().unwrap() as usize,
        result["error"].as_str().map(str::to_string),
    )
}

fn hop_at<'a>(hops: &'a [StoredHop], path: &str) -> &'a StoredHop {
    hops.iter()
        .find(|hop| hop.start.path == path)
        .unwrap_or_else(|| panic!("no hop for {path}"))
}

fn shown(db: &Path, hop: &StoredHop) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(["show", hop.trace_id.as_deref().expect("grouped")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).to_string()
}

/// The whole stream reached `message_stop`: complete, with the note, and urllib read it all.
/// Whether `show`'s words claim a 502: as a message's status, or as tracer's own answer (a bare
/// "502" can be part of an id or a time).
fn says_502(words: &str) -> bool {
    words.contains("got a 502")
        || words.contains("answered the caller 502")
        || words
            .lines()
            .any(|line| line.split_whitespace().any(|word| word == "502"))
}

fn assert_whole(hop: &StoredHop, read: (usize, Option<String>)) {
    assert_eq!(read, (SSE.len(), None), "the client read the whole body");
    assert_eq!(hop.state, HopState::Complete, "{:?}", hop.end.error);
    assert_eq!(hop.end.error, None);
    assert_eq!(
        hop.end.note.as_deref(),
        Some(
            "the upstream closed the connection without TLS close_notify after the stream's \
             end event (message_stop); a body without a length ends there, and the client's \
             ended cleanly too"
        )
    );
    assert_eq!(hop.end.response_body.bytes, SSE.as_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_without_close_notify_is_complete_and_a_cut_body_says_what_the_client_got() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(&[HOST]);
    let test_ca = pki.write_ca(dir.path(), "upstream-ca.pem");
    let upstream = ragged_upstream(&pki).await;
    let port = upstream.port();

    // The reverse route: urllib speaks plain HTTP to tracer, tracer HTTPS to the upstream.
    let db = dir.path().join("reverse.db");
    let args = [
        "proxy".to_string(),
        "--route".into(),
        format!("model:claude=127.0.0.1:0=https://{HOST}:{port}"),
        "--upstream-ca".into(),
        test_ca.display().to_string(),
        "--resolve".into(),
        format!("{HOST}:{port}={upstream}"),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let proxy = TracerProcess::spawn(&db, &args, &[], 3);
    let listen = proxy.listen_of("claude");
    let whole = urllib(&format!("http://{listen}/v1/messages"), None, None);
    let cut = urllib(&format!("http://{listen}/v1/cut"), None, None);
    let short = urllib(&format!("http://{listen}/v1/short"), None, None);
    let chunked_open = urllib(&format!("http://{listen}/v1/chunked-open"), None, None);
    let chunked_cut = urllib(&format!("http://{listen}/v1/chunked-cut"), None, None);
    proxy.stop();
    let hops = hops_in(&db).await;

    assert_whole(hop_at(&hops, "/v1/messages"), whole);
    // `show` says how the complete answer ended, under that answer.
    let words = shown(&db, hop_at(&hops, "/v1/messages"));
    assert!(
        words.contains("how it ended: the upstream closed the connection without TLS close_notify"),
        "{words}"
    );

    // Cut inside an event: urllib's body ends there cleanly (as it would directly), and the
    // hop is failed, saying so with the bytes the client got.
    assert_eq!(cut, (cut_at(), None), "the client read up to the cut");
    let hop = hop_at(&hops, "/v1/cut");
    assert_eq!(hop.state, HopState::Failed);
    assert_eq!(
        hop.end.error.as_deref(),
        Some(
            format!(
                "the upstream closed the connection without TLS close_notify in the middle of \
                 an SSE event, after {n} bytes: the body was cut short; the client got the 200 \
                 head and those {n} bytes, its body ending there as a body without a length does",
                n = cut_at()
            )
            .as_str()
        )
    );
    let words = shown(&db, hop);
    assert!(words.contains("cut off"), "{words}");
    assert!(!says_502(&words), "no 502 was sent: {words}");

    // Short of its Content-Length: urllib saw the cut too, and the words say how far it got.
    let (read, error) = short;
    assert_eq!(read, 300, "{error:?}");
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("IncompleteRead")),
        "{error:?}"
    );
    let hop = hop_at(&hops, "/v1/short");
    assert_eq!(hop.state, HopState::Failed);
    let error = hop.end.error.clone().unwrap_or_default();
    assert!(
        error.starts_with("upstream body failed after 300 of 1000 bytes: ")
            && error.contains("(the upstream closed the connection without TLS close_notify)")
            && error.ends_with(
                "the client got the 200 head and those 300 bytes, then tracer cut its answer \
                 off there as the upstream had"
            ),
        "{error}"
    );
    let words = shown(&db, hop);
    assert!(!says_502(&words), "{words}");

    // Chunked, cut after message_stop: the client had the whole answer, and its body ends.
    assert_eq!(chunked_open, (SSE.len(), None));
    let hop = hop_at(&hops, "/v1/chunked-open");
    assert_eq!(hop.state, HopState::Complete, "{:?}", hop.end.error);
    let note = hop.end.note.clone().unwrap_or_default();
    assert!(
        note.starts_with("the upstream broke off after the stream's end event (message_stop): ")
            && note.ends_with("the client's body was ended there, whole"),
        "{note}"
    );
    // Chunked, cut mid-event: the client saw the cut, and the words say where.
    let (read, error) = chunked_cut;
    assert_eq!(read, cut_at(), "{error:?}");
    assert!(error.is_some_and(|e| e.contains("IncompleteRead")));
    let hop = hop_at(&hops, "/v1/chunked-cut");
    assert_eq!(hop.state, HopState::Failed);
    let error = hop.end.error.clone().unwrap_or_default();
    assert!(
        error.starts_with(&format!("upstream body failed after {} bytes: ", cut_at()))
            && error.contains("the client got the 200 head and those"),
        "{error}"
    );

    // The forward proxy, decrypting: the same upstream through a CONNECT tunnel.
    let ca_dir = dir.path().join("ca");
    let db = dir.path().join("forward.db");
    let args = [
        "proxy".to_string(),
        "--forward".into(),
        "127.0.0.1:0".into(),
        "--ca-dir".into(),
        ca_dir.display().to_string(),
        "--intercept".into(),
        HOST.into(),
        "--upstream-ca".into(),
        test_ca.display().to_string(),
        "--resolve".into(),
        format!("{HOST}:443={upstream}"),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let proxy = TracerProcess::spawn(&db, &args, &[], 3);
    let forward = format!("http://{}", proxy.listen_of("forward"));
    let whole = urllib(
        &format!("https://{HOST}/v1/messages"),
        Some(&forward),
        Some(&ca_dir.join("tracer-ca.pem")),
    );
    proxy.stop();
    let hops = hops_in(&db).await;
    assert_whole(hop_at(&hops, "/v1/messages"), whole);
}

/// The issue's own case: Python's urllib under `tracer run`, the proxy and trust from its
/// environment, reading a stream that ends without close_notify.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urllib_under_tracer_run_reads_a_stream_ended_without_close_notify() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(&[HOST]);
    let test_ca = pki.write_ca(dir.path(), "upstream-ca.pem");
    let upstream = ragged_upstream(&pki).await;
    let resolve = format!("{HOST}:443={upstream}");
    let dir_path = dir.path().to_path_buf();
    let read = tokio::task::spawn_blocking(move || {
        let run = |command: &[&str]| {
            let mut args = vec![
                "--quiet",
                "--intercept",
                HOST,
                "--upstream-ca",
                test_ca.to_str().unwrap(),
                "--resolve",
                &resolve,
                "--",
            ];
            args.extend(command);
            super::run_cli::tracer_run(&dir_path, &[], &args)
        };
        urllib_by(
            Some(&run),
            &format!("https://{HOST}/v1/messages"),
            Some("env"),
            None,
        )
    })
    .await
    .unwrap();
    let hops = hops_in(&dir.path().join("run.db")).await;
    assert_whole(hop_at(&hops, "/v1/messages"), read);
}
