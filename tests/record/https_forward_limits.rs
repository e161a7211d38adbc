//! The forward proxy under a flood of silent clients: an intercepted `CONNECT` that never sends
//! its TLS hello (or sends half of one) is closed after the handshake time-out and recorded as
//! failed, while the proxy goes on serving; and connections beyond the bound are answered `503`
//! and closed instead of holding descriptors.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tracer_record::ca::CertAuthority;
use tracer_record::proxy::{ForwardLimits, ForwardSettings, Proxy, ProxySettings, ProxyStats};
use tracer_store::{Recorder, Store, WriterReport};
use tracer_wire::hop::HopState;

/// A forward proxy over a temp database, with these limits.
struct Forward {
    addr: SocketAddr,
    store: Store,
    stop: oneshot::Sender<()>,
    run: tokio::task::JoinHandle<ProxyStats>,
    writer: tokio::task::JoinHandle<WriterReport>,
    _dir: tempfile::TempDir,
}

async fn forward(limits: ForwardLimits) -> Forward {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tracer.db")).await.unwrap();
    let (ca, _) = CertAuthority::load_or_create(&dir.path().join("ca")).unwrap();
    let settings = ProxySettings {
        shutdown_grace: Duration::from_millis(300),
        ..ProxySettings::default()
    };
    let proxy = Proxy::bind(Vec::new(), settings)
        .await
        .unwrap()
        .with_forward(ForwardSettings {
            listen: "127.0.0.1:0".parse().unwrap(),
            intercept: Vec::new(),
            host_roles: Vec::new(),
            ca: Arc::new(ca),
            limits,
            identify_clients: true,
        })
        .await
        .unwrap();
    let addr = proxy.forward_addr().unwrap();
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(recorder, async move {
        let _ = stopped.await;
    }));
    Forward {
        addr,
        store,
        stop,
        run,
        writer,
        _dir: dir,
    }
}

/// A `CONNECT` to an intercepted host, answered `200`, with `then` sent right behind it.
async fn connected(proxy: SocketAddr, host: &str, then: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(proxy).await.unwrap();
    let mut ask = format!("CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n").into_bytes();
    ask.extend_from_slice(then);
    stream.write_all(&ask).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "closed early");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    stream
}

/// One absolute-form request through the proxy: its whole raw answer.
async fn plain_request(proxy: SocketAddr, upstream: SocketAddr) -> String {
    let mut stream = TcpStream::connect(proxy).await.unwrap();
    let ask = format!(
        "GET http://{upstream}/ok HTTP/1.1\r\nHost: {upstream}\r\nconnection: close\r\n\r\n"
    );
    stream.write_all(ask.as_bytes()).await.unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer).await;
    answer
}

async fn ok_upstream() -> SocketAddr {
    super::https_support::plain_upstream(|_| async move {
        http::Response::new(super::https_support::full("fine"))
    })
    .await
}

/// Waits for the proxy to close `stream`: end of file (or a reset), never more bytes.
async fn closed_by_proxy(mut stream: TcpStream) {
    let mut buffer = [0u8; 64];
    match stream.read(&mut buffer).await {
        Ok(0) => {}
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("expected the proxy to close the connection, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_that_never_finish_their_handshake_are_closed_and_the_proxy_serves_on() {
    let limits = ForwardLimits {
        handshake_timeout: Duration::from_millis(300),
        max_connections: 256,
    };
    let proxy = forward(limits).await;
    let upstream = ok_upstream().await;
    let mut silent = Vec::new();
    for i in 0..20 {
        silent.push(connected(proxy.addr, &format!("silent{i}.example.test"), &[]).await);
    }
    // Half a ClientHello: a handshake record that announces 512 bytes and brings 9.
    let mut halves = Vec::new();
    let partial = [
        0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
    ];
    for i in 0..10 {
        halves.push(connected(proxy.addr, &format!("half{i}.example.test"), &partial).await);
    }
    // Thirty clients hold their CONNECTs open: the proxy still serves a plain request.
    let answer = plain_request(proxy.addr, upstream).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("fine"), "{answer}");
    // Each one is closed by the proxy once its time is up (the bound is only a hang guard).
    let closing = async {
        for stream in silent.into_iter().chain(halves) {
            closed_by_proxy(stream).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), closing)
        .await
        .expect("silent CONNECTs were never closed");
    proxy.stop.send(()).unwrap();
    proxy.run.await.unwrap();
    proxy.writer.await.unwrap();
    let hops = proxy.store.all_hops().await.unwrap();
    let failed: Vec<_> = hops
        .iter()
        .filter(|h| h.start.method == "CONNECT")
        .collect();
    assert_eq!(failed.len(), 30, "one failed hop per silent CONNECT");
    for hop in failed {
        assert_eq!(hop.state, HopState::Failed);
        let error = hop.end.error.clone().unwrap_or_default();
        let expected = if hop.start.route.starts_with("silent") {
            "the client sent nothing within 300 ms of its CONNECT"
        } else {
            "the client's handshake did not complete within 300 ms"
        };
        assert!(error.contains(expected), "{}: {error}", hop.start.route);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_bound_are_answered_503_until_one_closes() {
    let limits = ForwardLimits {
        handshake_timeout: Duration::from_secs(600),
        max_connections: 3,
    };
    let proxy = forward(limits).await;
    let upstream = ok_upstream().await;
    let mut held = Vec::new();
    for i in 0..3 {
        held.push(connected(proxy.addr, &format!("held{i}.example.test"), &[]).await);
    }
    let answer = plain_request(proxy.addr, upstream).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    let body: serde_json::Value =
        serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("3 connections open") && message.contains("--forward-max-connections"),
        "{message}"
    );
    // One client goes away: its slot is freed once the proxy has seen it go.
    drop(held.pop());
    let served = async {
        loop {
            let answer = plain_request(proxy.addr, upstream).await;
            if !answer.starts_with("HTTP/1.1 503") {
                return answer;
            }
            tokio::task::yield_now().await;
        }
    };
    let answer = tokio::time::timeout(Duration::from_secs(60), served)
        .await
        .expect("the freed slot was never given to a new connection");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(held);
    proxy.stop.send(()).unwrap();
    proxy.run.await.unwrap();
    proxy.writer.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracer_proxy_takes_both_limits_from_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca");
    let forward = |db: &str, extra: &[&str]| {
        let mut args = vec!["proxy", "--forward", "127.0.0.1:0", "--ca-dir"];
        args.push(ca.to_str().unwrap());
        args.extend_from_slice(extra);
        super::https_support::TracerProcess::spawn(&dir.path().join(db), &args, &[], 3)
    };
    // One connection at a time: a second one is answered 503 while the first is held.
    let bounded = forward("a.db", &["--forward-max-connections", "1"]);
    let addr = bounded.listen_of("forward");
    let held = connected(addr, "held.example.test", &[]).await;
    let answer = plain_request(addr, ok_upstream().await).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("1 connections open"), "{answer}");
    drop(held);
    bounded.stop();
    // A short handshake time-out closes a silent CONNECT.
    let quick = forward("b.db", &["--handshake-timeout", "0.2"]);
    let silent = connected(quick.listen_of("forward"), "silent.example.test", &[]).await;
    tokio::time::timeout(Duration::from_secs(60), closed_by_proxy(silent))
        .await
        .expect("the silent CONNECT was never closed");
    quick.stop();
    // A time-out that is not a positive number of seconds is refused up front.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["--db", dir.path().join("c.db").to_str().unwrap()])
        .args([
            "proxy",
            "--forward",
            "127.0.0.1:0",
            "--handshake-timeout",
            "0",
        ])
        .args(["--ca-dir", ca.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--handshake-timeout must be a positive number of seconds"),
        "{stderr}"
    );
}
