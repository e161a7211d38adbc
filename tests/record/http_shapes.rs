//! HTTP shapes over raw sockets, each sent through the proxy and checked on the wire and in the
//! database: chunked trailers, a chunked body on GET and DELETE, a 304 with its headers, and a
//! WebSocket upgrade that becomes a recorded two-way tunnel of messages.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_store::hops::StoredHop;
use tracer_store::{Recorder, Store, WriterReport};
use tracer_wire::hop::HopState;

struct Running {
    addr: SocketAddr,
    store: Store,
    stop: tokio::sync::oneshot::Sender<()>,
    run: tokio::task::JoinHandle<tracer_record::proxy::ProxyStats>,
    writer: tokio::task::JoinHandle<WriterReport>,
    _dir: tempfile::TempDir,
}

async fn proxy_to(upstream: SocketAddr) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let route = Route::new(
        "model",
        "test",
        "127.0.0.1:0",
        &format!("http://{upstream}"),
    )
    .unwrap();
    let proxy = Proxy::bind(vec![route], ProxySettings::default())
        .await
        .unwrap();
    let addr = proxy.routes()[0].listen;
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(recorder, async move {
        let _ = stopped.await;
    }));
    Running {
        addr,
        store,
        stop,
        run,
        writer,
        _dir: dir,
    }
}

impl Running {
    /// Stops the proxy and returns every hop, all written.
    async fn hops(self) -> Vec<StoredHop> {
        let _ = self.stop.send(());
        self.run.await.unwrap();
        let report = self.writer.await.unwrap();
        assert_eq!(report.hops_not_written, 0);
        let hops = self.store.all_hops().await.unwrap();
        assert!(hops.iter().all(|h| h.state != HopState::InFlight));
        hops
    }
}

/// An upstream that runs `answer` on each accepted connection.
async fn raw_upstream<F, Fut>(answer: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answer = std::sync::Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(answer(stream));
        }
    });
    addr
}

/// Reads up to and including the blank line after a head.
async fn read_head(stream: &mut (impl AsyncRead + Unpin)) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            stream.read(&mut byte).await.unwrap(),
            1,
            "head ended early: {head:?}"
        );
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

async fn read_to_end(stream: &mut TcpStream) -> String {
    let mut all = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut all))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&all).into_owned()
}

const TRAILED: &[u8] =
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-checksum\r\n\r\n\
5\r\nhello\r\n6\r\n world\r\n0\r\nx-checksum: abc123\r\n\r\n";

#[tokio::test]
async fn trailers_end_the_hop_complete_are_stored_and_reach_clients_that_accept_them() {
    let upstream = raw_upstream(|mut stream| async move {
        let head = read_head(&mut stream).await;
        assert!(head.to_ascii_lowercase().contains("te: trailers"), "{head}");
        stream.write_all(TRAILED).await.unwrap();
    })
    .await;
    let proxy = proxy_to(upstream).await;
    let mut client = TcpStream::connect(proxy.addr).await.unwrap();
    client
        .write_all(b"GET /t HTTP/1.1\r\nHost: x\r\nTE: trailers\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let response = read_to_end(&mut client).await;
    assert!(response.contains("hello"), "{response}");
    let tail = response.split("\r\n0\r\n").nth(1).unwrap_or_default();
    assert!(
        tail.contains("x-checksum: abc123"),
        "trailers reach the client: {response}"
    );
    let hops = proxy.hops().await;
    assert_eq!(hops[0].state, HopState::Complete, "{:?}", hops[0].end.error);
    assert_eq!(hops[0].end.response_body.bytes, b"hello world");
    let trailers = &hops[0].end.response_trailers;
    assert_eq!(trailers.len(), 1);
    assert_eq!(
        (trailers[0].name.as_str(), trailers[0].text()),
        ("x-checksum", Some("abc123"))
    );
}

#[tokio::test]
async fn chunked_bodies_on_get_and_delete_keep_their_framing_and_the_connection() {
    let upstream = raw_upstream(|mut stream| async move {
        // Two requests on one connection, each with a chunked body of 4 bytes.
        for _ in 0..2 {
            let head = read_head(&mut stream).await;
            assert!(
                head.to_ascii_lowercase()
                    .contains("transfer-encoding: chunked"),
                "{head}"
            );
            let mut body = vec![0u8; b"4\r\nping\r\n0\r\n\r\n".len()];
            stream.read_exact(&mut body).await.unwrap();
            assert_eq!(body, b"4\r\nping\r\n0\r\n\r\n");
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .await
                .unwrap();
        }
    })
    .await;
    let proxy = proxy_to(upstream).await;
    let mut client = TcpStream::connect(proxy.addr).await.unwrap();
    for method in ["GET", "DELETE"] {
        let request = format!(
            "{method} /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nping\r\n0\r\n\r\n"
        );
        client.write_all(request.as_bytes()).await.unwrap();
        let head = read_head(&mut client).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{method}: {head}");
        let mut body = [0u8; 2];
        client.read_exact(&mut body).await.unwrap();
        assert_eq!(&body, b"ok");
    }
    let hops = proxy.hops().await;
    assert_eq!(hops.len(), 2);
    for (hop, method) in hops.iter().zip(["GET", "DELETE"]) {
        assert_eq!(hop.start.method, method);
        assert_eq!(hop.state, HopState::Complete);
        assert_eq!(hop.end.request_body.bytes, b"ping");
    }
}

#[tokio::test]
async fn a_304_keeps_its_headers() {
    let upstream = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        stream
            .write_all(b"HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 1234\r\n\r\n")
            .await
            .unwrap();
    })
    .await;
    let proxy = proxy_to(upstream).await;
    let mut client = TcpStream::connect(proxy.addr).await.unwrap();
    client
        .write_all(b"GET /r HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"v1\"\r\n\r\n")
        .await
        .unwrap();
    let head = read_head(&mut client).await.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 304"), "{head}");
    assert!(head.contains("content-length: 1234"), "{head}");
    assert!(head.contains("etag: \"v1\""), "{head}");
    drop(client);
    let hops = proxy.hops().await;
    assert_eq!(hops[0].end.status, Some(304));
    assert_eq!(hops[0].state, HopState::Complete);
}

#[tokio::test]
async fn a_websocket_upgrade_is_a_recorded_two_way_tunnel() {
    let upstream = raw_upstream(|mut stream| async move {
        let head = read_head(&mut stream).await.to_ascii_lowercase();
        assert!(head.contains("upgrade: websocket"), "{head}");
        assert!(head.contains("connection: upgrade"), "{head}");
        stream
            .write_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
            .await
            .unwrap();
        // Echo until the client closes, then close too.
        let mut buf = [0u8; 1024];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            stream.write_all(&buf[..n]).await.unwrap();
        }
        stream.write_all(b"bye").await.unwrap();
    })
    .await;
    let proxy = proxy_to(upstream).await;
    let mut client = TcpStream::connect(proxy.addr).await.unwrap();
    client
        .write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        .await
        .unwrap();
    let head = read_head(&mut client).await.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(head.contains("upgrade: websocket"), "{head}");
    assert!(
        head.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="),
        "{head}"
    );
    for message in [&b"\x81\x05hello"[..], b"\x81\x04more"] {
        client.write_all(message).await.unwrap();
        let mut echo = vec![0u8; message.len()];
        client.read_exact(&mut echo).await.unwrap();
        assert_eq!(echo, message);
    }
    client.shutdown().await.unwrap();
    assert_eq!(read_to_end(&mut client).await, "bye");
    // The hop ends when both directions have closed; wait for it before stopping.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while proxy
        .store
        .all_hops()
        .await
        .unwrap()
        .first()
        .is_none_or(|h| h.state == HopState::InFlight)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the tunnel's hop never ended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let hops = proxy.hops().await;
    let hop = &hops[0];
    assert_eq!(hop.state, HopState::Complete, "{:?}", hop.end.error);
    assert_eq!(hop.end.status, Some(101));
    assert_eq!(
        hop.end.request_body.total_len, 13,
        "bytes client → upstream"
    );
    assert_eq!(
        hop.end.response_body.total_len, 16,
        "bytes upstream → client"
    );
    // The bytes are read as WebSocket frames (the body keeps only their count): both texts each
    // way, and the three bytes after them the start of a frame the close cut off.
    let record = hop.end.websocket.as_ref().unwrap();
    let read: Vec<(tracer_wire::hop::WsDirection, u8, &[u8], bool)> = record
        .messages
        .iter()
        .map(|m| (m.direction, m.opcode, m.data.as_slice(), m.complete))
        .collect();
    use tracer_wire::hop::WsDirection::{ToClient, ToUpstream};
    assert_eq!(
        read,
        [
            (ToUpstream, 1, &b"hello"[..], true),
            (ToClient, 1, &b"hello"[..], true),
            (ToUpstream, 1, &b"more"[..], true),
            (ToClient, 1, &b"more"[..], true),
            (ToClient, 2, &b"e"[..], false),
        ]
    );
    let (head_at, ended_at) = (
        hop.end.response_head_unix_ns.unwrap(),
        hop.end.response_ended_unix_ns.unwrap(),
    );
    assert!(ended_at > head_at, "the hop lasts as long as the tunnel");
}

#[tokio::test]
async fn a_tunnel_open_when_tracer_stops_is_recorded_with_what_crossed() {
    let upstream = raw_upstream(|mut stream| async move {
        read_head(&mut stream).await;
        stream
            .write_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 1024];
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 || stream.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    })
    .await;
    let proxy = proxy_to(upstream).await;
    let mut client = TcpStream::connect(proxy.addr).await.unwrap();
    client
        .write_all(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
        )
        .await
        .unwrap();
    read_head(&mut client).await;
    client.write_all(b"\x81\x05hello").await.unwrap();
    let mut echo = [0u8; 7];
    client.read_exact(&mut echo).await.unwrap();
    // The client keeps the tunnel open; stopping tracer ends the hop instead of waiting.
    let hops = tokio::time::timeout(Duration::from_secs(20), proxy.hops())
        .await
        .expect("tracer stops with a tunnel open");
    let hop = &hops[0];
    assert_eq!(hop.state, HopState::Aborted);
    assert_eq!(
        hop.end.error.as_deref(),
        Some("tracer stopped while the tunnel was open")
    );
    assert_eq!(hop.end.request_body.total_len, 7);
    assert_eq!(hop.end.response_body.total_len, 7);
}
