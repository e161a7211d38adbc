//! `tracer proxy --ui`: a page following `/api/events` is told of an answer's text while the
//! upstream is still streaming it, then of the hop and its trace once it ends; over real
//! sockets, with a raw upstream that holds its answer half-sent until the test lets it go.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::sample_db::TRACER;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An upstream that answers one streamed chat completion: the first event at once, the rest
/// when `release` is sent (interop_ui_live.rs uses it too).
pub(crate) fn held_upstream() -> (u16, mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (release, released) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let chunk = |text: &str| format!("{:x}\r\n{text}\r\n", text.len());
        let first = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Added buy \"}}]}\n\n";
        let rest = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"milk.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{}",
            chunk(first)
        )
        .unwrap();
        stream.flush().unwrap();
        let _ = released.recv_timeout(Duration::from_secs(120));
        write!(stream, "{}0\r\n\r\n", chunk(rest)).unwrap();
        stream.flush().unwrap();
    });
    (port, release)
}

/// The events of `/api/events` as (name, data), read on their own thread.
fn follow(addr: &str) -> mpsc::Receiver<(String, String)> {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /api/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut event = String::new();
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            // Chunked framing lines are neither `event:` nor `data:`; skipped.
            if let Some(name) = line.strip_prefix("event: ") {
                event = name.to_string();
            } else if let Some(data) = line.strip_prefix("data: ") {
                if tx.send((event.clone(), data.to_string())).is_err() {
                    return;
                }
            } else if line.starts_with("HTTP/1.1 ") {
                let _ = tx.send(("status".into(), line));
            }
        }
    });
    rx
}

/// Reads events until one passes `test`; every event read is kept in `seen`.
fn wait_for(
    events: &mpsc::Receiver<(String, String)>,
    seen: &mut Vec<(String, String)>,
    what: &str,
    test: impl Fn(&str, &str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok((name, data)) => {
                seen.push((name.clone(), data.clone()));
                if test(&name, &data) {
                    return data;
                }
            }
            Err(_) => panic!("no {what} within 15 s: {seen:?}"),
        }
    }
}

#[test]
fn a_page_sees_an_answer_while_it_streams_then_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, release) = held_upstream();
    let route_port = crate::free_ports::free_port();
    let ui_port = crate::free_ports::free_port();
    let mut child = Command::new(TRACER)
        .arg("--db")
        .arg(dir.path().join("t.db"))
        .args([
            "proxy",
            "--route",
            &format!("model=127.0.0.1:{route_port}=http://127.0.0.1:{upstream}"),
            "--ui",
            &format!("127.0.0.1:{ui_port}"),
        ])
        .env("RUST_LOG", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let _proxy = Killed(child);
    let mut said = String::new();
    for line in stderr.lines().map_while(Result::ok) {
        said.push_str(&line);
        if line.starts_with("tracer ui: ") {
            assert_eq!(line, format!("tracer ui: http://127.0.0.1:{ui_port}/"));
            break;
        }
    }
    assert!(said.contains("tracer ui: "), "{said}");
    let ui = format!("127.0.0.1:{ui_port}");
    let events = follow(&ui);
    let mut seen = Vec::new();
    wait_for(&events, &mut seen, "the event stream", |name, data| {
        name == "status" && data.contains("200")
    });

    // The agent's request, through the proxy; its answer is read on its own thread.
    let body = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"Add buy milk to my notes"}]}"#;
    let mut client = TcpStream::connect(("127.0.0.1", route_port)).unwrap();
    write!(
        client,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{route_port}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let answer = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = client.read_to_string(&mut text);
        text
    });

    // Half the answer is out and the upstream holds the rest: the page already has its text.
    let streamed = wait_for(&events, &mut seen, "a stream event", |name, data| {
        name == "stream" && data.contains("Added buy ")
    });
    let streamed: serde_json::Value = serde_json::from_str(&streamed).unwrap();
    assert!(
        !streamed["text"].as_str().unwrap().contains("milk."),
        "{streamed}"
    );
    let hop_id = streamed["hop_id"].as_str().unwrap().to_string();

    release.send(()).unwrap();
    let answer = answer.join().unwrap();
    assert!(
        answer.contains("milk.") && answer.contains("[DONE]"),
        "{answer}"
    );
    // The hop ends, is grouped, and its trace is pushed with what `ls` says of it.
    let trace = wait_for(&events, &mut seen, "a trace event", |name, data| {
        name == "trace"
            && serde_json::from_str::<serde_json::Value>(data)
                .is_ok_and(|t| t["hop_count"].as_u64() == Some(1) && t["status"] != "in flight")
    });
    let trace: serde_json::Value = serde_json::from_str(&trace).unwrap();
    assert_eq!(trace["title"], "Add buy milk to my notes", "{trace}");
    let trace_id = trace["id"].as_str().unwrap();
    assert!(
        seen.iter().any(|(name, data)| name == "hop"
            && data.contains(&hop_id)
            && data.contains(trace_id)
            && !data.contains("in_flight")),
        "the hop's end, in its trace: {seen:?}"
    );
}
