//! WebSocket frames over real sockets, with the `websockets` Python package on both ends
//! (tests/interop/ws_peers.py, in .venv): through a reverse route and through the forward proxy
//! decrypting `wss://` (CONNECT + TLS), with and without permessage-deflate. The client sends
//! masked text, a fragmented text, binary, a ping, a 4 MiB text and asks for a close with 1011;
//! the server echoes, pings back and closes. Every message is recorded in both directions with
//! its opcode, payload and sizes, every byte on the wire is counted in a message, the big message
//! is kept only up to --max-body, and a client that vanishes leaves a hop with what crossed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;
use tracer_wire::hop::ws_message::opcode;
use tracer_wire::hop::{HopState, WsDirection, WsMessage};

use tracer_store::hops::StoredHop;

use super::https_support::{HOST, TestPki, TracerProcess, hops_in, tls_front};
use super::interop_peers::venv_python;

const PEERS: &str = "tests/interop/ws_peers.py";
const MAX_BODY: usize = 1024 * 1024;
const BIG: u64 = 4 * 1024 * 1024 + 4;

fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(PEERS)
}

/// The scripted server, and the port it listens on.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(python: &Path, deflate: bool) -> Server {
        let mut command = Command::new(python);
        command.arg(peers()).arg("serve");
        if !deflate {
            command.arg("--no-deflate");
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        Server { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client(python: &Path, url: &str, deflate: bool, extra: &[&str]) -> Value {
    let mut command = Command::new(python);
    command.arg(peers()).args(["client", url]).args(extra);
    if !deflate {
        command.arg("--no-deflate");
    }
    let output = command.stdin(Stdio::null()).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn said(messages: &[&WsMessage]) -> Vec<(u8, Vec<u8>)> {
    messages
        .iter()
        .map(|m| (m.opcode, m.data[..m.data.len().min(16)].to_vec()))
        .collect()
}

/// What the database must hold after the client's full script; the trace's id.
async fn assert_recorded(db: &Path, deflate: bool) -> String {
    let hops = hops_in(db).await;
    let sockets: Vec<_> = hops.iter().filter(|h| h.end.websocket.is_some()).collect();
    assert_eq!(sockets.len(), 1, "{hops:#?}");
    assert_socket(sockets[0], deflate);
    sockets[0].trace_id.clone().unwrap()
}

fn assert_socket(hop: &StoredHop, deflate: bool) {
    assert_eq!(hop.end.status, Some(101));
    assert_eq!(hop.state, HopState::Complete, "{:?}", hop.end.error);
    let record = hop.end.websocket.as_ref().unwrap();
    assert_eq!(record.extensions.contains("permessage-deflate"), deflate);
    let side = |direction| -> Vec<&WsMessage> {
        record
            .messages
            .iter()
            .filter(|m| m.direction == direction)
            .collect()
    };
    let (sent, received) = (side(WsDirection::ToUpstream), side(WsDirection::ToClient));
    let mut close = 1011u16.to_be_bytes().to_vec();
    close.extend_from_slice(b"scripted close");
    let text = |t: &str| (opcode::TEXT, t.as_bytes()[..t.len().min(16)].to_vec());
    let binary: Vec<u8> = (0..=255).collect();
    assert_eq!(
        said(&sent),
        vec![
            text("hello"),
            text("frag-mented"),
            (opcode::BINARY, binary[..16].to_vec()),
            (opcode::PING, b"client-ping".to_vec()),
            text("ping-me"),
            (opcode::PONG, b"server-ping".to_vec()),
            text("big:xxxxxxxxxxxx"),
            // --max-body of this direction was spent on the big message: counted, not kept.
            (opcode::TEXT, Vec::new()),
            (opcode::CLOSE, close[..16].to_vec()),
        ]
    );
    assert_eq!(
        said(&received),
        vec![
            text("hello"),
            text("frag-mented"),
            (opcode::BINARY, binary[..16].to_vec()),
            (opcode::PONG, b"client-ping".to_vec()),
            (opcode::PING, b"server-ping".to_vec()),
            text("pinged"),
            text("got 4194308"),
            (opcode::CLOSE, close[..16].to_vec()),
        ]
    );
    assert_eq!(sent[2].data, binary, "binary payload unmasked byte-exact");
    assert_eq!(received[2].data, binary);
    assert!(
        sent[1].frames >= 3,
        "the fragmented text came in its frames"
    );
    assert_eq!(sent[1].data, b"frag-mented");
    assert_eq!(
        received[7].close_status(),
        Some((1011, "scripted close".into()))
    );
    let big = sent[6];
    assert_eq!(big.size, BIG, "the big message's whole size is counted");
    assert!(big.data.len() <= MAX_BODY && big.truncated());
    assert!(big.data.iter().skip(4).all(|&b| b == b'x'));
    assert_eq!(sent[7].size, 10, "close-1011");
    for m in record.messages.iter().filter(|m| m.opcode < 8) {
        assert_eq!(m.compressed, deflate, "{m:?}");
    }
    assert!(
        record
            .messages
            .iter()
            .all(|m| m.complete && m.error.is_none())
    );
    let wire = |list: &[&WsMessage]| list.iter().map(|m| m.wire_size).sum::<u64>();
    assert_eq!(
        wire(&sent),
        hop.end.request_body.total_len,
        "every byte up is in a message"
    );
    assert_eq!(wire(&received), hop.end.response_body.total_len);
    if deflate {
        assert!(
            big.wire_size < big.size / 100,
            "the big text travelled compressed"
        );
    } else {
        assert!(big.wire_size > BIG);
    }
}

fn assert_client_saw_everything(got: &Value, deflate: bool) {
    let extensions = if deflate {
        serde_json::json!(["permessage-deflate"])
    } else {
        serde_json::json!([])
    };
    assert_eq!(got[0]["extensions"], extensions, "{got}");
    let heads: Vec<&str> = got.as_array().unwrap()[1..6]
        .iter()
        .map(|m| m["head"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(heads, ["hello", "frag-mented", "", "pinged", "got 4194308"]);
    assert_eq!(got[6]["close"], 1011);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_through_a_reverse_route_are_recorded_both_ways_with_and_without_deflate() {
    let Some(python) = venv_python(".venv", "websockets", "websockets==17.4") else {
        return;
    };
    for deflate in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(&python, deflate);
        let db = dir.path().join("t.db");
        let route = format!("model=127.0.0.1:0=http://127.0.0.1:{}", server.port);
        let max_body = MAX_BODY.to_string();
        let args = ["proxy", "--route", &route, "--max-body", &max_body];
        let proxy = TracerProcess::spawn(&db, &args, &[], 3);
        let url = format!("ws://{}/v1/responses", proxy.listen_of("model"));
        let got = client(&python, &url, deflate, &[]);
        assert_client_saw_everything(&got, deflate);
        proxy.stop();
        let trace = assert_recorded(&db, deflate).await;
        let shown = show(&db, &trace);
        assert!(shown.contains("binary 256 B"), "{shown}");
        assert!(
            shown.contains("close 16 B  code 1011 \"scripted close\""),
            "{shown}"
        );
        assert!(!shown.contains('\u{fffd}'), "{shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_the_forward_proxy_decrypts_are_recorded_and_a_vanished_client_leaves_a_hop() {
    let Some(python) = venv_python(".venv", "websockets", "websockets==17.4") else {
        return;
    };
    for deflate in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(&python, deflate);
        let pki = TestPki::new(&[HOST]);
        let upstream_ca = pki.write_ca(dir.path(), "upstream-ca.pem");
        let front = tls_front(&pki, format!("127.0.0.1:{}", server.port).parse().unwrap()).await;
        let db = dir.path().join("t.db");
        let ca_dir = dir.path().join("ca");
        let args = [
            "proxy".to_string(),
            "--forward".into(),
            "127.0.0.1:0".into(),
            "--ca-dir".into(),
            ca_dir.display().to_string(),
            "--intercept".into(),
            HOST.into(),
            "--upstream-ca".into(),
            upstream_ca.display().to_string(),
            "--resolve".into(),
            format!("{HOST}:443={front}"),
            "--max-body".into(),
            MAX_BODY.to_string(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let proxy = TracerProcess::spawn(&db, &args, &[], 3);
        let forward = format!("http://{}", proxy.listen_of("forward"));
        let cafile = ca_dir.join("tracer-ca.pem").display().to_string();
        let url = format!("wss://{HOST}/v1/responses");
        let options = ["--proxy", forward.as_str(), "--cafile", cafile.as_str()];
        let got = client(&python, &url, deflate, &options);
        assert_client_saw_everything(&got, deflate);
        if deflate {
            let mut vanish = options.to_vec();
            vanish.push("--vanish");
            let got = client(&python, &url, deflate, &vanish);
            assert_eq!(got[1]["head"], "hello", "{got}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        proxy.stop();
        if !deflate {
            assert_recorded(&db, deflate).await;
            continue;
        }
        let hops = hops_in(&db).await;
        let sockets: Vec<_> = hops.iter().filter(|h| h.end.websocket.is_some()).collect();
        assert_eq!(sockets.len(), 2, "{hops:#?}");
        assert_socket(sockets[0], deflate);
        let vanished = sockets[1];
        assert_ne!(vanished.state, HopState::InFlight);
        let record = vanished.end.websocket.as_ref().unwrap();
        let hellos = record
            .messages
            .iter()
            .filter(|m| m.data == b"hello")
            .count();
        assert_eq!(
            hellos, 2,
            "what crossed before the client vanished: {record:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absolute_form_upgrade_on_the_forward_proxy_is_relayed_and_its_frames_recorded() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some(python) = venv_python(".venv", "websockets", "websockets==17.4") else {
        return;
    };
    let server = Server::start(&python, false);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let ca_dir = dir.path().join("ca").display().to_string();
    let args = ["proxy", "--forward", "127.0.0.1:0", "--ca-dir", &ca_dir];
    let proxy = TracerProcess::spawn(&db, &args, &[], 3);
    let mut stream = tokio::net::TcpStream::connect(proxy.listen_of("forward"))
        .await
        .unwrap();
    let target = format!("127.0.0.1:{}", server.port);
    let head = format!(
        "GET http://{target}/v1/responses HTTP/1.1\r\nHost: {target}\r\nConnection: Upgrade\r\n\
         Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        assert_eq!(stream.read(&mut byte).await.unwrap(), 1);
        answer.push(byte[0]);
    }
    let answer = String::from_utf8(answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 101"), "{answer}");
    let key = [7u8, 1, 2, 3];
    let masked = |code: u8, payload: &[u8]| {
        let mut frame = vec![0x80 | code, 0x80 | payload.len() as u8];
        frame.extend_from_slice(&key);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        frame
    };
    stream.write_all(&masked(1, b"hello")).await.unwrap();
    let mut echo = [0u8; 7];
    stream.read_exact(&mut echo).await.unwrap();
    assert_eq!(&echo, b"\x81\x05hello");
    stream
        .write_all(&masked(8, &1000u16.to_be_bytes()))
        .await
        .unwrap();
    let mut close = [0u8; 4];
    stream.read_exact(&mut close).await.unwrap();
    assert_eq!(close, [0x88, 0x02, 0x03, 0xe8]);
    drop(stream);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    proxy.stop();
    let hops = hops_in(&db).await;
    let socket = hops.iter().find(|h| h.end.websocket.is_some()).unwrap();
    assert_eq!(socket.end.status, Some(101));
    let record = socket.end.websocket.as_ref().unwrap();
    let read: Vec<(WsDirection, u8, &[u8])> = record
        .messages
        .iter()
        .map(|m| (m.direction, m.opcode, m.data.as_slice()))
        .collect();
    assert_eq!(
        read,
        [
            (WsDirection::ToUpstream, opcode::TEXT, &b"hello"[..]),
            (WsDirection::ToClient, opcode::TEXT, &b"hello"[..]),
            (WsDirection::ToUpstream, opcode::CLOSE, &[3, 232][..]),
            (WsDirection::ToClient, opcode::CLOSE, &[3, 232][..]),
        ]
    );
}
