//! Streams stay streams: chunk-by-chunk delivery, client aborts, and shutdown with hops in flight.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use tokio::sync::mpsc;
use tracer_record::proxy::ProxySettings;
use tracer_wire::hop::HopState;

use super::harness::{Harness, TestBody, client, full, settled_hops, spawn_upstream};

type ChunkSender = mpsc::Sender<Result<Frame<Bytes>, Infallible>>;

/// An upstream whose one response body is fed by the test, chunk by chunk, through the returned
/// channel: the test decides when each chunk is written.
async fn scripted_stream_upstream() -> (std::net::SocketAddr, mpsc::Receiver<ChunkSender>) {
    let (senders_tx, senders_rx) = mpsc::channel::<ChunkSender>(4);
    let senders_tx = Arc::new(Mutex::new(Some(senders_tx)));
    let addr = spawn_upstream(move |_req| {
        let senders_tx = senders_tx.clone();
        async move {
            let (tx, rx) = mpsc::channel(1);
            let announce = senders_tx.lock().unwrap().clone();
            if let Some(announce) = announce {
                announce.send(tx).await.unwrap();
            }
            let body: TestBody = StreamBody::new(tokio_stream_from(rx)).boxed();
            let mut response = hyper::Response::new(body);
            response
                .headers_mut()
                .insert("content-type", "application/x-ndjson".parse().unwrap());
            response
        }
    })
    .await;
    (addr, senders_rx)
}

fn tokio_stream_from<T: Send + 'static>(
    mut rx: mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> + Send {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

#[tokio::test]
async fn ndjson_chunk_k_reaches_the_client_before_chunk_k_plus_1_is_written() {
    let (upstream, mut senders) = scripted_stream_upstream().await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    let request = Request::post(harness.url("/api/chat"))
        .body(full("{\"stream\":true}"))
        .unwrap();
    let response_task = tokio::spawn(client().request(request));
    let upstream_body = senders.recv().await.unwrap();
    // The upstream sends its head at once; the proxy passes it on before any body.
    let mut response = response_task.await.unwrap().unwrap();
    let mut expected = Vec::new();
    for k in 0..5 {
        let line = format!(
            "{{\"message\":{{\"content\":\"token {k}\"}},\"done\":{}}}\n",
            k == 4
        );
        expected.extend_from_slice(line.as_bytes());
        upstream_body
            .send(Ok(Frame::data(Bytes::from(line.clone()))))
            .await
            .unwrap();
        // Chunk k must arrive while the upstream has not written k+1: a buffering proxy would
        // hold it back and this read would time out.
        let body = response.body_mut();
        let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .unwrap_or_else(|_| panic!("chunk {k} was held back by the proxy"))
            .unwrap()
            .unwrap();
        assert_eq!(frame.into_data().unwrap(), line);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(upstream_body);
    let rest = response.into_body().collect().await.unwrap().to_bytes();
    assert!(rest.is_empty());
    let (_, _, store, _dir) = harness.stop().await;
    let hop = &settled_hops(&store, 1).await[0];
    assert_eq!(hop.state, HopState::Complete);
    assert_eq!(hop.end.response_body.bytes, expected);
    assert_eq!(
        hop.end.chunks.len(),
        5,
        "one recorded chunk per upstream write"
    );
    let offsets: Vec<i64> = hop.end.chunks.iter().map(|c| c.offset_ns).collect();
    assert!(
        offsets.windows(2).all(|w| w[1] - w[0] >= 10_000_000),
        "chunks keep their spacing: {offsets:?}"
    );
}

/// A proxied streaming request whose upstream has written `first` and waits for more: the
/// harness, the upstream body's sender, and the client's response.
async fn stream_under_way(
    first: &'static [u8],
) -> (Harness, ChunkSender, hyper::Response<hyper::body::Incoming>) {
    let (upstream, mut senders) = scripted_stream_upstream().await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    let request = Request::post(harness.url("/api/chat"))
        .body(full("{}"))
        .unwrap();
    let pending = tokio::spawn(client().request(request));
    let upstream_body = senders.recv().await.unwrap();
    upstream_body
        .send(Ok(Frame::data(Bytes::from_static(first))))
        .await
        .unwrap();
    let response = pending.await.unwrap().unwrap();
    (harness, upstream_body, response)
}

#[tokio::test]
async fn a_client_leaving_mid_stream_is_recorded_aborted_and_the_upstream_is_dropped() {
    let (harness, upstream_body, mut response) = stream_under_way(b"{\"a\":1}\n").await;
    let frame = response.body_mut().frame().await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), "{\"a\":1}\n");
    drop(response);
    // The proxy drops its upstream connection, so the upstream's body channel closes.
    tokio::time::timeout(Duration::from_secs(5), upstream_body.closed())
        .await
        .expect("the upstream connection was not dropped");
    let hops = settled_hops(&harness.store, 1).await;
    assert_eq!(hops[0].state, HopState::Aborted);
    assert_eq!(hops[0].end.response_body.bytes, b"{\"a\":1}\n");
    assert!(
        hops[0]
            .end
            .error
            .as_deref()
            .unwrap()
            .contains("client went away")
    );
    harness.stop().await;
}

#[tokio::test]
async fn shutdown_waits_for_in_flight_hops_and_writes_them() {
    let (harness, upstream_body, response) = stream_under_way(b"first\n").await;
    let store = harness.store.clone();
    let mut in_flight = Vec::new();
    for _ in 0..250 {
        in_flight = store.all_hops().await.unwrap();
        if !in_flight.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(in_flight.len(), 1);
    assert_eq!(
        in_flight[0].state,
        HopState::InFlight,
        "the hop is visible while it runs"
    );
    let stopping = tokio::spawn(harness.stop());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !stopping.is_finished(),
        "shutdown waits for the in-flight hop"
    );
    upstream_body
        .send(Ok(Frame::data(Bytes::from_static(b"last\n"))))
        .await
        .unwrap();
    drop(upstream_body);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "first\nlast\n");
    let (_, report, store, _dir) = stopping.await.unwrap();
    assert_eq!(report.hops_not_written, 0);
    let hop = &store.all_hops().await.unwrap()[0];
    assert_eq!(hop.state, HopState::Complete);
    assert_eq!(hop.end.response_body.bytes, b"first\nlast\n");
}

#[tokio::test]
async fn a_client_whose_upload_breaks_off_is_recorded_aborted_not_as_an_upstream_failure() {
    use tokio::io::AsyncWriteExt;
    let upstream = super::harness::echo_upstream().await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    let mut stream = tokio::net::TcpStream::connect(harness.addr).await.unwrap();
    stream
        .write_all(
            b"POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"model\":",
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(stream);
    let hops = settled_hops(&harness.store, 1).await;
    assert_eq!(hops[0].state, HopState::Aborted, "{:?}", hops[0].end.error);
    let error = hops[0].end.error.as_deref().unwrap();
    assert!(error.contains("client"), "{error}");
    assert_eq!(hops[0].end.request_body.bytes, b"{\"model\":");
    harness.stop().await;
}
