//! Reverse routes to `https://` upstreams: `tracer proxy` as a process in front of a local TLS
//! server for api.example.test (test CA via --upstream-ca, address via --resolve). JSON and SSE
//! arrive byte-exact, HTTP/2 is used when the upstream offers it, connections are pooled, and a
//! CA that does not match gives the client a 502 naming the TLS failure. An Anthropic
//! `/v1/messages` stream, cut anywhere by the network, is reassembled and explained.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use tracer_wire::hop::HopState;

use super::https_support::{
    HOST, TestBody, TestPki, TracerProcess, full, hops_in, plain_client, tls_upstream,
};

const JSON: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"hello from TLS"},"finish_reason":"stop"}]}"#;

/// A recorded Anthropic `/v1/messages` stream (text, then a `tool_use` block).
const ANTHROPIC: &[u8] = include_bytes!("../fixtures/dialects/anthropic_stream_tool_use.sse");

const SSE: [&str; 3] = [
    "data: {\"choices\":[{\"delta\":{\"content\":\"hel\"}}]}\n\n",
    "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n",
    "data: [DONE]\n\n",
];

/// Answers JSON on /v1/chat/completions and a paced SSE stream on /v1/stream, saying which HTTP
/// version and host it saw.
async fn answer(request: Request<Incoming>) -> Response<TestBody> {
    let version = format!("{:?}", request.version());
    let host = request
        .headers()
        .get("host")
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    let path = request.uri().path().to_string();
    let _ = request.into_body().collect().await;
    let mut response = if path == "/v1/messages" {
        // Sent in pieces of 97 bytes, cutting events anywhere, as a network would.
        let pieces: Vec<Result<Frame<Bytes>, std::convert::Infallible>> = ANTHROPIC
            .chunks(97)
            .map(|piece| Ok(Frame::data(Bytes::copy_from_slice(piece))))
            .collect();
        let mut response =
            Response::new(StreamBody::new(futures_util::stream::iter(pieces)).boxed());
        response
            .headers_mut()
            .insert("content-type", "text/event-stream".parse().unwrap());
        response
    } else if path == "/v1/stream" {
        let frames = futures_util::stream::unfold(0usize, |i| async move {
            if i >= SSE.len() {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
            Some((
                Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from_static(
                    SSE[i].as_bytes(),
                ))),
                i + 1,
            ))
        });
        let mut response = Response::new(StreamBody::new(frames).boxed());
        response
            .headers_mut()
            .insert("content-type", "text/event-stream".parse().unwrap());
        response
    } else {
        let mut response = Response::new(full(JSON));
        response
            .headers_mut()
            .insert("content-type", "application/json".parse().unwrap());
        response
    };
    response
        .headers_mut()
        .insert("x-seen-version", version.parse().unwrap());
    response
        .headers_mut()
        .insert("x-seen-host", host.parse().unwrap());
    response
}

async fn post(addr: std::net::SocketAddr, path: &str) -> (StatusCode, http::HeaderMap, Bytes) {
    let request = Request::post(format!("http://{addr}{path}"))
        .header("content-type", "application/json")
        .header("x-goog-api-key", "AIza-secret")
        .body(full(
            r#"{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}"#,
        ))
        .unwrap();
    let response = plain_client().request(request).await.unwrap();
    let (parts, body) = response.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

fn route_args(port: u16, ca: &std::path::Path, upstream: std::net::SocketAddr) -> Vec<String> {
    vec![
        "proxy".into(),
        "--route".into(),
        format!("model:cloud=127.0.0.1:0=https://{HOST}:{port}"),
        "--upstream-ca".into(),
        ca.display().to_string(),
        "--resolve".into(),
        format!("{HOST}:{port}={upstream}"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_upstreams_are_byte_exact_pooled_and_use_h2_by_alpn() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(&[HOST]);
    let ca = pki.write_ca(dir.path(), "ca.pem");
    let h2 = tls_upstream(&pki, &["h2", "http/1.1"], answer).await;
    let h1 = tls_upstream(&pki, &["http/1.1"], answer).await;
    // One port name for both: each route pins it to its own upstream through its own process.
    for (upstream, version) in [(&h2, "HTTP/2.0"), (&h1, "HTTP/1.1")] {
        let db = dir.path().join(format!("{}.db", upstream.addr.port()));
        let args = route_args(upstream.addr.port(), &ca, upstream.addr);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let proxy = TracerProcess::spawn(&db, &args, &[], 3);
        let listen = proxy.listen_of("cloud");

        // An HTTP/1.1 connection goes back to tracer's pool a moment after its answer has
        // ended; each request waits that moment so the test counts pooling, not that race.
        let settle = || tokio::time::sleep(std::time::Duration::from_millis(100));
        let (status, headers, body) = post(listen, "/v1/chat/completions").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, JSON.as_bytes(), "JSON byte-exact");
        assert_eq!(headers["x-seen-version"], version);
        let host = headers["x-seen-host"].to_str().unwrap();
        assert_eq!(host, format!("{HOST}:{}", upstream.addr.port()));

        settle().await;
        let (status, _, body) = post(listen, "/v1/stream").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, SSE.concat().as_bytes(), "SSE byte-exact");
        settle().await;
        let (_, _, body) = post(listen, "/v1/chat/completions").await;
        assert_eq!(body, JSON.as_bytes());
        settle().await;
        let (status, _, body) = post(listen, "/v1/messages").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, ANTHROPIC, "Anthropic stream byte-exact");
        assert_eq!(
            upstream
                .handshakes
                .load(std::sync::atomic::Ordering::SeqCst),
            1,
            "{version}: four requests, one pooled TLS connection"
        );
        proxy.stop();

        let hops = hops_in(&db).await;
        assert_eq!(hops.len(), 4);
        let shown = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
            .arg("--db")
            .arg(&db)
            .args(["show", hops[3].trace_id.as_deref().expect("grouped")])
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.contains(
                "the model says \"I'll check the current weather in Paris for you.\" and asks for tool get_weather {\"location\":\"Paris\"}"
            ),
            "the Anthropic stream reassembled and explained: {shown}"
        );
        let stream = &hops[1];
        assert_eq!(stream.state, HopState::Complete);
        assert_eq!(
            stream.start.url,
            format!("https://{HOST}:{}/v1/stream", upstream.addr.port())
        );
        assert_eq!(stream.end.response_body.bytes, SSE.concat().as_bytes());
        assert!(stream.end.chunks.len() >= 2, "{:?}", stream.end.chunks);
        let key = stream
            .start
            .request_headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("x-goog-api-key"))
            .unwrap();
        assert_eq!(key.value, b"[redacted]");
    }
}

/// One request through a route to `upstream` trusting `ca`: the 502's words, the hop's error,
/// and what `tracer show` says of the hop.
async fn refused(
    upstream: &super::https_support::TlsUpstream,
    ca: &std::path::Path,
) -> (String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let args = route_args(upstream.addr.port(), ca, upstream.addr);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let proxy = TracerProcess::spawn(&db, &args, &[], 3);
    let (status, _, body) = post(proxy.listen_of("cloud"), "/v1/chat/completions").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    let text = String::from_utf8_lossy(&body).to_string();
    assert!(text.contains("\"route\":\"cloud\""), "{text}");
    proxy.stop();
    let hops = hops_in(&db).await;
    assert_eq!(hops.len(), 1);
    assert_eq!(hops[0].state, HopState::Failed);
    let error = hops[0].end.error.clone().unwrap_or_default();
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .args(["show", hops[0].trace_id.as_deref().expect("grouped")])
        .output()
        .unwrap();
    (
        text,
        error,
        String::from_utf8_lossy(&shown.stdout).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_upstream_certificate_says_why_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(&[HOST]);
    let other = TestPki::new(&[HOST]);
    let wrong_ca = other.write_ca(dir.path(), "other-ca.pem");
    let upstream = tls_upstream(&pki, &["h2", "http/1.1"], answer).await;
    let (text, error, shown) = refused(&upstream, &wrong_ca).await;
    let words = "the upstream's certificate was refused: it was issued by a CA tracer does not \
                 trust (UnknownIssuer); if the upstream's CA is one of your own, pass it with \
                 --upstream-ca FILE";
    assert!(text.contains(words), "the client's 502 says it: {text}");
    assert_eq!(error, words);
    assert!(
        shown.contains("tracer answered the caller 502 itself"),
        "the explanation names tracer's own answer: {shown}"
    );

    // A CA certificate presented as the server's own: refused, and said so.
    let ca_server = TestPki::ca_as_server(&[HOST]);
    let ca = ca_server.write_ca(dir.path(), "ca-server.pem");
    let upstream = tls_upstream(&ca_server, &["http/1.1"], answer).await;
    let (text, error, _) = refused(&upstream, &ca).await;
    let words = "the upstream's certificate was refused: it is a CA certificate used as a \
                 server's (CaUsedAsEndEntity)";
    assert!(text.contains(words), "{text}");
    assert_eq!(error, words);
    assert!(!error.contains("invalid peer certificate"), "{error}");
}

#[test]
fn a_missing_upstream_ca_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(dir.path().join("t.db"))
        .args([
            "proxy",
            "--route",
            "model=127.0.0.1:0=https://api.example.test",
            "--upstream-ca",
            "/nonexistent/ca.pem",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--upstream-ca /nonexistent/ca.pem"),
        "{stderr}"
    );
}
