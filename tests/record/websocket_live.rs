//! An open WebSocket's turns are on the record while it is open, and a socket cut by tracer
//! stopping is recorded with what came through. A scripted Responses-over-WebSocket upstream
//! (raw RFC 6455 frames, in this process) plays Codex's recorded answers
//! (tests/fixtures/agents/codex/websocket) to a client that sends Codex's recorded
//! `response.create` frames, masked, through a reverse route of a real `tracer proxy`:
//! after two turns, with the socket open, the database holds the socket in flight with its
//! messages, its turns read complete and `tracer show` tells the user's words and the tool call;
//! then SIGTERM (or Ctrl-C) reaches tracer halfway through the third answer, and the hop is
//! aborted (never in flight) with every message that crossed, every byte counted.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracer_store::hops::StoredHop;
use tracer_trace::RecordedHop;
use tracer_trace::read::ws_turns::turns_of;
use tracer_wire::hop::{HopState, WsDirection};

use super::https_support::{TracerProcess, hops_in};

const FIXTURE: &str = "tests/fixtures/agents/codex/websocket/socket.json";
/// Events of the third answer the upstream sends before tracer is stopped.
const CUT_AFTER: usize = 5;

/// Codex's recorded steps: each `response.create` it sent and the events that answered it.
fn steps() -> Vec<(String, Vec<String>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let socket: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut steps: Vec<(String, Vec<String>)> = Vec::new();
    for m in socket["messages"].as_array().unwrap() {
        let text = m["text"].as_str().unwrap_or("").to_string();
        match m["direction"].as_str().unwrap() {
            "send" => steps.push((text, Vec::new())),
            _ => steps.last_mut().unwrap().1.push(text),
        }
    }
    assert_eq!(steps.len(), 3);
    steps
}

fn frame(opcode: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut out = vec![0x80 | opcode];
    let bit = if mask.is_some() { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => out.push(bit | n as u8),
        n if n <= 0xffff => {
            out.push(bit | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(bit | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    match mask {
        Some(key) => {
            out.extend_from_slice(&key);
            out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        }
        None => out.extend_from_slice(payload),
    }
    out
}

/// One whole frame's payload (unmasked); None at the end of the stream.
async fn read_frame(from: &mut (impl AsyncRead + Unpin)) -> Option<Vec<u8>> {
    let mut head = [0u8; 2];
    from.read_exact(&mut head).await.ok()?;
    let len = match head[1] & 0x7f {
        126 => u64::from(from.read_u16().await.ok()?),
        127 => from.read_u64().await.ok()?,
        n => u64::from(n),
    };
    let mut key = [0u8; 4];
    if head[1] & 0x80 != 0 {
        from.read_exact(&mut key).await.ok()?;
    }
    let mut payload = vec![0u8; len as usize];
    from.read_exact(&mut payload).await.ok()?;
    for (i, b) in payload.iter_mut().enumerate() {
        *b ^= key[i % 4];
    }
    Some(payload)
}

async fn read_head(from: &mut (impl AsyncRead + Unpin)) -> String {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(from.read_u8().await.unwrap());
    }
    String::from_utf8(head).unwrap()
}

/// The scripted upstream: answers each `response.create` with Codex's recorded events (only
/// the first `CUT_AFTER` of the third), then holds the socket open.
async fn upstream(listener: TcpListener, steps: Vec<(String, Vec<String>)>) {
    let (mut socket, _) = listener.accept().await.unwrap();
    read_head(&mut socket).await;
    socket
        .write_all(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
        )
        .await
        .unwrap();
    for (n, (_, answers)) in steps.iter().enumerate() {
        if read_frame(&mut socket).await.is_none() {
            return;
        }
        let sent = if n == 2 { CUT_AFTER } else { answers.len() };
        for answer in &answers[..sent] {
            socket
                .write_all(&frame(1, answer.as_bytes(), None))
                .await
                .unwrap();
        }
    }
    while read_frame(&mut socket).await.is_some() {}
}

/// Sends step `n`'s `response.create` and reads its `answers` answers back.
async fn play(client: &mut (impl AsyncRead + AsyncWrite + Unpin), request: &str, answers: usize) {
    client
        .write_all(&frame(1, request.as_bytes(), Some([3, 1, 4, 1])))
        .await
        .unwrap();
    for _ in 0..answers {
        read_frame(client).await.unwrap();
    }
}

fn socket_of(hops: &[StoredHop]) -> Option<&StoredHop> {
    hops.iter().find(|h| h.end.websocket.is_some())
}

fn turns(hop: &StoredHop) -> Vec<RecordedHop> {
    turns_of(&tracer_live::load::recorded(hop.clone()))
}

fn show(db: &Path, trace: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(["show", trace])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The first two turns, read from the database while the socket is open (waits up to 10 s).
async fn assert_live_turns(db: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let socket = loop {
        let hops = hops_in(db).await;
        if let Some(socket) = socket_of(&hops)
            && turns(socket).len() == 2
            && socket.trace_id.is_some()
        {
            break socket.clone();
        }
        assert!(Instant::now() < deadline, "no live turns: {hops:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(socket.state, HopState::InFlight, "the socket is still open");
    let turns = turns(&socket);
    for turn in &turns {
        let end = turn.end.as_ref().unwrap();
        assert_eq!(end.state, Some(HopState::Complete), "{:?}", end.error);
    }
    let trace = socket.trace_id.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let shown = show(db, &trace);
        if shown.contains("Add buy milk to my notes") && shown.contains("append") {
            assert!(!shown.contains("closed before"), "{shown}");
            break;
        }
        assert!(Instant::now() < deadline, "the open trace: {shown}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn open_then_stop(signal: Signal) {
    let steps = steps();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(upstream(listener, steps.clone()));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let route = format!("model=127.0.0.1:0=http://127.0.0.1:{port}");
    let proxy = TracerProcess::spawn(&db, &["proxy", "--route", &route], &[], 3);
    let mut client = TcpStream::connect(proxy.listen_of("model")).await.unwrap();
    let head = "GET /v1/responses HTTP/1.1\r\nHost: api.scripted.test\r\nConnection: Upgrade\r\n\
                Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
                Sec-WebSocket-Version: 13\r\nopenai-beta: responses_websockets=2026-02-06\r\n\r\n";
    client.write_all(head.as_bytes()).await.unwrap();
    assert!(read_head(&mut client).await.starts_with("HTTP/1.1 101"));
    for (request, answers) in &steps[..2] {
        play(&mut client, request, answers.len()).await;
    }
    assert_live_turns(&db).await;
    play(&mut client, &steps[2].0, CUT_AFTER).await;
    // The socket stays open while tracer is stopped.
    let stderr = proxy.stop_with(signal);
    drop(client);
    server.abort();
    let hops = hops_in(&db).await;
    let socket = socket_of(&hops).unwrap();
    assert_eq!(socket.state, HopState::Aborted, "never left in flight");
    assert_eq!(
        socket.end.error.as_deref(),
        Some("tracer stopped while the tunnel was open"),
        "{stderr}"
    );
    let record = socket.end.websocket.as_ref().unwrap();
    let side = |direction| {
        record
            .messages
            .iter()
            .filter(|m| m.direction == direction)
            .collect::<Vec<_>>()
    };
    let (sent, received) = (side(WsDirection::ToUpstream), side(WsDirection::ToClient));
    let answered = steps[0].1.len() + steps[1].1.len() + CUT_AFTER;
    assert_eq!((sent.len(), received.len()), (3, answered));
    assert_eq!(sent[2].data, steps[2].0.as_bytes());
    assert!(
        record
            .messages
            .windows(2)
            .all(|w| w[0].at_unix_ns <= w[1].at_unix_ns)
    );
    let wire =
        |list: &[&tracer_wire::hop::WsMessage]| list.iter().map(|m| m.wire_size).sum::<u64>();
    assert_eq!(
        wire(&sent),
        socket.end.request_body.total_len,
        "every byte up counted"
    );
    assert_eq!(wire(&received), socket.end.response_body.total_len);
    let states: Vec<_> = turns(socket)
        .iter()
        .map(|t| t.end.as_ref().unwrap().state)
        .collect();
    assert_eq!(
        states,
        [
            Some(HopState::Complete),
            Some(HopState::Complete),
            Some(HopState::Aborted)
        ],
        "the third answer was cut"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_sockets_turns_are_readable_and_sigterm_records_what_came_through() {
    open_then_stop(Signal::SIGTERM).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_open_when_tracer_is_interrupted_is_recorded_and_counted() {
    open_then_stop(Signal::SIGINT).await;
}
