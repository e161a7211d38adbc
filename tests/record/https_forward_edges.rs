//! The forward proxy's edges, run in-process with a short grace period: a tunnel still open
//! when the proxy stops is recorded as cut off (with its bytes so far), a CONNECT to a host that
//! cannot be reached is a 502 and a failed tunnel hop, and a request that is not absolute-form
//! gets a 400 that says what the forward proxy takes; an absolute-form body larger than what role
//! detection reads is forwarded and recorded whole; plain HTTP inside a CONNECT to an intercepted
//! host is read as HTTP, not taken for a failed TLS handshake.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tracer_record::ca::CertAuthority;
use tracer_record::proxy::forward_roles::parse_patterns;
use tracer_record::proxy::{ForwardSettings, Proxy, ProxySettings};
use tracer_store::{Recorder, Store};
use tracer_wire::hop::HopState;

/// Reads an HTTP response head (up to the blank line) from the proxy.
async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "closed early");
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tunnels_cut_off_at_stop_unreachable_hosts_and_origin_form_are_recorded_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tracer.db")).await.unwrap();
    let (ca, _) = CertAuthority::load_or_create(&dir.path().join("ca")).unwrap();
    // An echo server that never closes first: the tunnel stays open until the proxy stops.
    let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo_addr = echo.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = echo.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 1024];
                while let Ok(n) = stream.read(&mut buffer).await {
                    if n == 0 || stream.write_all(&buffer[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);

    let upstream = super::https_support::plain_upstream(|request| async move {
        use http_body_util::BodyExt;
        let body = request.into_body().collect().await.unwrap().to_bytes();
        http::Response::new(super::https_support::full(body.len().to_string()))
    })
    .await;
    let settings = ProxySettings {
        shutdown_grace: Duration::from_millis(300),
        upstream_tls: tracer_record::proxy::tls::UpstreamTls {
            extra_cas: Vec::new(),
            resolve: vec![format!("only.example.test:80={upstream}").parse().unwrap()],
        },
        ..ProxySettings::default()
    };
    let proxy = Proxy::bind(Vec::new(), settings)
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
    let (stop, stopped) = oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(recorder, async move {
        let _ = stopped.await;
    }));

    // Origin-form on the forward port: refused with words.
    let mut plain = TcpStream::connect(forward).await.unwrap();
    plain
        .write_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let head = read_head(&mut plain).await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    drop(plain);

    // Absolute-form with a body larger than what role detection reads: forwarded whole.
    let body = "x".repeat(200_000);
    let mut raw = TcpStream::connect(forward).await.unwrap();
    let ask = format!(
        "POST http://{upstream}/upload HTTP/1.1\r\nHost: {upstream}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    raw.write_all(ask.as_bytes()).await.unwrap();
    let mut answer = String::new();
    raw.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("\r\n\r\n200000"), "{answer}");

    // Plain HTTP inside a CONNECT to an intercepted host: read as it is, not taken for TLS.
    let mut inside = TcpStream::connect(forward).await.unwrap();
    inside
        .write_all(b"CONNECT only.example.test:80 HTTP/1.1\r\nHost: only.example.test:80\r\n\r\n")
        .await
        .unwrap();
    let head = read_head(&mut inside).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    inside
        .write_all(b"POST /plain HTTP/1.1\r\nHost: only.example.test\r\ncontent-length: 3\r\nconnection: close\r\n\r\nabc")
        .await
        .unwrap();
    let mut answer = String::new();
    inside.read_to_string(&mut answer).await.unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("\r\n\r\n3"),
        "{answer}"
    );

    // Unreachable: a 502 and a failed tunnel hop.
    let mut stream = TcpStream::connect(forward).await.unwrap();
    let ask = format!("CONNECT {closed_addr} HTTP/1.1\r\nHost: {closed_addr}\r\n\r\n");
    stream.write_all(ask.as_bytes()).await.unwrap();
    let head = read_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 502"), "{head}");
    drop(stream);

    // A tunnel left open: 5 bytes up, 5 echoed down, then the proxy stops.
    let mut tunnel = TcpStream::connect(forward).await.unwrap();
    let ask = format!("CONNECT {echo_addr} HTTP/1.1\r\nHost: {echo_addr}\r\n\r\n");
    tunnel.write_all(ask.as_bytes()).await.unwrap();
    let head = read_head(&mut tunnel).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    tunnel.write_all(b"hello").await.unwrap();
    let mut echoed = [0u8; 5];
    tunnel.read_exact(&mut echoed).await.unwrap();
    assert_eq!(&echoed, b"hello", "bytes untouched");
    stop.send(()).unwrap();
    let stats = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the proxy stops after its grace period")
        .unwrap();
    assert_eq!(stats.cut_off, 1, "{stats:?}");
    let report = writer.await.unwrap();
    assert_eq!(report.hops_not_written, 0);

    let hops = store.all_hops().await.unwrap();
    assert_eq!(hops.len(), 4, "{hops:#?}");
    let upload = &hops[0];
    assert_eq!(upload.start.role, tracer_wire::hop::Role::Other);
    assert_eq!(upload.start.route, "127.0.0.1");
    assert_eq!(
        upload.end.request_body.bytes.len(),
        200_000,
        "recorded whole"
    );
    let plain = &hops[1];
    assert_eq!(plain.start.route, "only.example.test");
    assert_eq!(plain.start.url, "http://only.example.test:80/plain");
    assert_eq!(plain.end.request_body.bytes, b"abc");
    let refused = &hops[2];
    assert_eq!(refused.start.method, "CONNECT");
    assert_eq!(refused.state, HopState::Failed);
    let error = refused.end.error.clone().unwrap_or_default();
    assert!(
        error.contains(&format!("cannot reach {closed_addr}")),
        "{error}"
    );
    let cut = &hops[3];
    assert_eq!(cut.start.path, echo_addr.to_string());
    assert_eq!(cut.state, HopState::Aborted);
    assert_eq!(cut.end.request_body.total_len, 5);
    assert_eq!(cut.end.response_body.total_len, 5);
    let error = cut.end.error.clone().unwrap_or_default();
    assert!(error.contains("cut off"), "{error}");
    store.close().await;
}
