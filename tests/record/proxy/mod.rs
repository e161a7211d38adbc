//! The recording path over real sockets: forwarding is byte-exact and streaming, every hop lands
//! in SQLite with its bodies, timings and failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod end_events;
pub(crate) mod harness;
mod loops;
mod streaming;

use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use harness::{Harness, client, echo_upstream, full, header, settled_hops};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use rand::RngCore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tracer_record::proxy::ProxySettings;
use tracer_wire::hop::HopState;

/// Headers a test adds to its request, as name and raw value.
type ExtraHeaders<'a> = Vec<(&'a str, &'a [u8])>;

async fn round_trip(
    harness: &Harness,
    body: Vec<u8>,
    extra: &[(&str, &[u8])],
) -> (StatusCode, http::HeaderMap, Bytes) {
    let mut request =
        Request::post(harness.url("/echo?q=1")).header("content-type", "application/octet-stream");
    for (name, value) in extra {
        request = request.header(*name, http::HeaderValue::from_bytes(value).unwrap());
    }
    let response = client()
        .request(request.body(full(body)).unwrap())
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

#[tokio::test]
async fn bodies_round_trip_byte_exact_and_are_recorded_whole() {
    let upstream = echo_upstream().await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    let mut random = vec![0u8; 5 * 1024 * 1024];
    rand::rng().fill_bytes(&mut random);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(b"{\"hello\":\"compressed\"}").unwrap();
    let gzip = gzip.finish().unwrap();
    let corpus: Vec<(Vec<u8>, ExtraHeaders)> = vec![
        (random, vec![]),
        (b"{\"not\": json,,".to_vec(), vec![]),
        (Vec::new(), vec![]),
        (gzip, vec![("content-encoding", b"gzip")]),
        (b"x".to_vec(), vec![("x-echo-latin1", b"caf\xe9 \xff")]),
    ];
    for (body, headers) in &corpus {
        let (status, response_headers, received) =
            round_trip(&harness, body.clone(), headers).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            received.as_ref(),
            body.as_slice(),
            "client got the exact bytes back"
        );
        for (name, value) in headers {
            assert_eq!(
                response_headers.get(*name).unwrap().as_bytes(),
                *value,
                "{name} passed unchanged"
            );
        }
        assert_eq!(response_headers["x-seen-path"], "/echo?q=1");
        assert_eq!(
            response_headers["x-seen-host"],
            upstream.to_string().as_str(),
            "Host is the upstream"
        );
    }
    let (_, _, store, _dir) = harness.stop().await;
    let hops = settled_hops(&store, corpus.len()).await;
    assert_eq!(hops.len(), corpus.len());
    for (hop, (body, headers)) in hops.iter().zip(&corpus) {
        assert_eq!(hop.state, HopState::Complete);
        assert_eq!(hop.end.status, Some(200));
        assert_eq!(hop.end.request_body.bytes, *body);
        assert_eq!(hop.end.response_body.bytes, *body);
        assert_eq!(hop.end.response_body.total_len, body.len() as u64);
        assert!(!hop.end.response_body.truncated);
        assert_eq!(hop.start.method, "POST");
        assert_eq!(hop.start.path, "/echo?q=1");
        assert_eq!(hop.start.url, format!("http://{upstream}/echo?q=1"));
        for (name, value) in headers {
            assert_eq!(
                header(&hop.start.request_headers, name),
                Some(*value),
                "{name} recorded byte-exact"
            );
        }
        let started = hop.start.started_unix_ns;
        let head = hop.end.response_head_unix_ns.unwrap();
        let ended = hop.end.response_ended_unix_ns.unwrap();
        assert!(started <= hop.end.request_ended_unix_ns.unwrap());
        assert!(started <= head && head <= ended, "timestamps are ordered");
        if !body.is_empty() {
            assert!(hop.end.response_first_byte_unix_ns.unwrap() >= head);
            assert_eq!(
                hop.end.chunks.iter().map(|c| c.size).sum::<u64>(),
                body.len() as u64
            );
        }
    }
}

#[tokio::test]
async fn a_body_over_the_cap_is_forwarded_whole_and_recorded_truncated() {
    let upstream = echo_upstream().await;
    let settings = ProxySettings {
        max_body: 1000,
        ..ProxySettings::default()
    };
    let harness = Harness::start(upstream, settings).await;
    let body: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let (_, _, received) = round_trip(&harness, body.clone(), &[]).await;
    assert_eq!(received.as_ref(), body.as_slice());
    let (_, _, store, _dir) = harness.stop().await;
    let hop = &settled_hops(&store, 1).await[0];
    for captured in [&hop.end.request_body, &hop.end.response_body] {
        assert_eq!(captured.bytes, body[..1000]);
        assert!(captured.truncated);
        assert_eq!(captured.total_len, 100_000);
    }
}

#[tokio::test]
async fn five_hundred_concurrent_requests_make_five_hundred_rows() {
    let upstream = echo_upstream().await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    let client = client();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..500 {
        let client = client.clone();
        let url = harness.url(&format!("/echo/{i}"));
        tasks.spawn(async move {
            let response = client
                .request(
                    Request::post(url)
                        .body(full(format!("{{\"n\":{i}}}")))
                        .unwrap(),
                )
                .await
                .unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, format!("{{\"n\":{i}}}"));
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    let (_, report, store, _dir) = harness.stop().await;
    assert_eq!(report.hops_not_written, 0);
    let hops = settled_hops(&store, 500).await;
    assert_eq!(hops.len(), 500);
    let mut paths: Vec<_> = hops.iter().map(|h| h.start.path.clone()).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), 500, "every request is its own row");
}

#[tokio::test]
async fn an_upstream_that_is_down_gets_a_502_json_and_a_failed_row() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let harness = Harness::start(closed, ProxySettings::default()).await;
    let response = client()
        .request(
            Request::post(harness.url("/api/chat"))
                .body(full("{}"))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["error"]["route"], "test");
    assert_eq!(json["error"]["upstream"], format!("http://{closed}/"));
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("upstream"),
        "{json}"
    );
    let (_, _, store, _dir) = harness.stop().await;
    let hop = &settled_hops(&store, 1).await[0];
    assert_eq!(hop.state, HopState::Failed);
    assert_eq!(hop.end.status, Some(502));
    assert!(
        hop.end
            .error
            .as_deref()
            .unwrap()
            .contains("upstream request failed")
    );
    assert_eq!(hop.end.request_body.bytes, b"{}");
}

#[tokio::test]
async fn no_response_head_in_time_is_a_504() {
    let upstream = harness::spawn_upstream(|_req| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        hyper::Response::new(full("late"))
    })
    .await;
    let settings = ProxySettings {
        upstream_timeout: Duration::from_millis(200),
        ..ProxySettings::default()
    };
    let harness = Harness::start(upstream, settings).await;
    let response = client()
        .request(Request::get(harness.url("/slow")).body(full("")).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert!(
        String::from_utf8_lossy(&body).contains("200 ms"),
        "{body:?}"
    );
    let (_, _, store, _dir) = harness.stop().await;
    let hop = &settled_hops(&store, 1).await[0];
    assert_eq!((hop.state, hop.end.status), (HopState::Failed, Some(504)));
}

#[tokio::test]
async fn secrets_are_redacted_unless_asked_not_to() {
    for redact in [true, false] {
        let upstream = echo_upstream().await;
        let settings = ProxySettings {
            redact,
            ..ProxySettings::default()
        };
        let harness = Harness::start(upstream, settings).await;
        let secrets: [(&str, &[u8]); 4] = [
            ("authorization", b"Bearer sk-123"),
            ("x-api-key", b"k-456"),
            ("x-echo-auth-token", b"t-789"),
            ("cookie", b"a=b"),
        ];
        let (_, response_headers, _) = round_trip(&harness, b"{}".to_vec(), &secrets).await;
        assert_eq!(
            response_headers["x-echo-auth-token"], "t-789",
            "the wire is never altered"
        );
        let (_, _, store, _dir) = harness.stop().await;
        let hop = &settled_hops(&store, 1).await[0];
        for (name, value) in secrets {
            let stored = header(&hop.start.request_headers, name).unwrap();
            let expected: &[u8] = if redact { b"[redacted]" } else { value };
            assert_eq!(stored, expected, "{name} with redact={redact}");
        }
        let cookie = header(&hop.end.response_headers, "set-cookie").unwrap();
        assert_eq!(
            cookie,
            if redact {
                b"[redacted]".as_slice()
            } else {
                b"session=abc".as_slice()
            }
        );
    }
}

#[tokio::test]
async fn expect_100_continue_and_keep_alive_work_on_one_connection() {
    let upstream = echo_upstream().await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    let mut stream = tokio::net::TcpStream::connect(harness.addr).await.unwrap();
    let head =
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 25];
    stream.read_exact(&mut buf).await.unwrap();
    assert!(
        buf.starts_with(b"HTTP/1.1 100 Continue\r\n\r\n"),
        "{:?}",
        String::from_utf8_lossy(&buf)
    );
    stream.write_all(b"hello").await.unwrap();
    let first = read_response(&mut stream).await;
    assert!(
        first.starts_with("HTTP/1.1 200") && first.ends_with("hello"),
        "{first}"
    );
    stream
        .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nagain")
        .await
        .unwrap();
    let second = read_response(&mut stream).await;
    assert!(second.ends_with("again"), "{second}");
    drop(stream);
    let (stats, _, store, _dir) = harness.stop().await;
    assert_eq!(
        stats.connections, 1,
        "both requests used one kept-alive connection"
    );
    assert_eq!(settled_hops(&store, 2).await.len(), 2);
}

/// Reads one response with a Content-Length body from a raw stream.
async fn read_response(stream: &mut tokio::net::TcpStream) -> String {
    let mut data = Vec::new();
    let mut byte = [0u8; 1];
    while !data.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.unwrap();
        data.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&data).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap();
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.unwrap();
    format!("{head}{}", String::from_utf8_lossy(&body))
}

#[tokio::test]
async fn agent_routes_carry_a_traceparent_whose_trace_id_is_the_hops() {
    let upstream =
        harness::spawn_upstream(|req: hyper::Request<hyper::body::Incoming>| async move {
            let seen = req
                .headers()
                .get("traceparent")
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default();
            hyper::Response::new(full(seen))
        })
        .await;
    let harness = Harness::start_with_role(
        upstream,
        tracer_wire::hop::Role::Agent,
        ProxySettings::default(),
    )
    .await;
    let ask = |traceparent: Option<&'static str>| {
        let mut request = Request::post(harness.url("/agent"));
        if let Some(value) = traceparent {
            request = request.header("traceparent", value);
        }
        async move {
            let response = client()
                .request(request.body(full("{\"message\":\"hi\"}")).unwrap())
                .await
                .unwrap();
            String::from_utf8(
                response
                    .into_body()
                    .collect()
                    .await
                    .unwrap()
                    .to_bytes()
                    .to_vec(),
            )
            .unwrap()
        }
    };
    let added = ask(None).await;
    let own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let kept = ask(Some(own)).await;
    let replaced = ask(Some("00-zz-bad-01")).await;
    assert_eq!(kept, own, "a client's valid traceparent is kept");
    assert_ne!(replaced, "00-zz-bad-01");
    let (_, _, store, _dir) = harness.stop().await;
    let hops = settled_hops(&store, 3).await;
    let parsed = tracer_wire::trace_context::TraceParent::parse(&added).unwrap();
    assert_eq!(
        parsed.trace_id_hex(),
        hops[0].start.id,
        "the added trace id is the agent hop's id"
    );
    assert_eq!(
        header(&hops[0].start.request_headers, "traceparent"),
        Some(added.as_bytes()),
        "the record shows the traceparent that was forwarded"
    );
    assert!(tracer_wire::trace_context::TraceParent::parse(&replaced).is_ok());
}

#[tokio::test]
async fn a_request_body_is_recorded_before_its_response_arrives() {
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let released = std::sync::Arc::new(tokio::sync::Mutex::new(Some(released)));
    let upstream = harness::spawn_upstream(move |req: hyper::Request<hyper::body::Incoming>| {
        let released = released.clone();
        async move {
            let body = req.into_body().collect().await.unwrap().to_bytes();
            if let Some(wait) = released.lock().await.take() {
                let _ = wait.await;
            }
            hyper::Response::new(full(body))
        }
    })
    .await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    let pending = tokio::spawn(
        client().request(
            Request::post(harness.url("/api/chat"))
                .body(full("{\"model\":\"m\"}"))
                .unwrap(),
        ),
    );
    let mut early = None;
    for _ in 0..250 {
        let hops = harness.store.all_hops().await.unwrap();
        if let Some(hop) = hops
            .first()
            .filter(|h| h.end.request_ended_unix_ns.is_some())
        {
            early = Some(hop.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let early = early.expect("the request body was not recorded while the hop was in flight");
    assert_eq!(early.state, HopState::InFlight);
    assert_eq!(early.end.request_body.bytes, b"{\"model\":\"m\"}");
    release.send(()).unwrap();
    pending.await.unwrap().unwrap();
    harness.stop().await;
}
