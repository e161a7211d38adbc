//! The bench's own upstream on 127.0.0.1:0: a small JSON answer to `POST /v1/chat`, a timed
//! NDJSON stream on `GET /stream` whose chunks carry the time the upstream sent them, and a
//! 14 MiB model stream (SSE) on `POST /v1/chat/completions`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Chunks in one NDJSON stream.
pub const STREAM_CHUNKS: u32 = 20;
/// The upstream's schedule: chunk k is due `k * CHUNK_GAP` after the response head.
pub const CHUNK_GAP: Duration = Duration::from_millis(10);

/// The small JSON exchange: what the bench sends and what the upstream answers.
pub const CHAT_REQUEST: &str =
    r#"{"model":"bench","messages":[{"role":"user","content":"buy milk"}],"stream":false}"#;
const CHAT_RESPONSE: &str = r#"{"model":"bench","message":{"role":"assistant","content":"Added milk to your list."},"done":true}"#;

pub type UpstreamBody = BoxBody<Bytes, Infallible>;

/// Serves until the process ends. `clock` is the bench's shared time base: stream chunks say
/// when they were sent as nanoseconds since it, so the client can compare gaps exactly.
pub async fn spawn(clock: Instant) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = service_fn(move |req| answer(req, clock));
                let _ = http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

/// The same upstream behind TLS (HTTP/1.1): the HTTPS columns' server.
pub async fn spawn_tls(
    clock: Instant,
    acceptor: tokio_rustls::TlsAcceptor,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let _ = stream.set_nodelay(true);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let service = service_fn(move |req| answer(req, clock));
                let _ = http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

async fn answer(
    request: Request<Incoming>,
    clock: Instant,
) -> Result<Response<UpstreamBody>, Infallible> {
    let path = request.uri().path().to_string();
    if path == "/big" {
        return Ok(big_body(request).await);
    }
    // Read the whole (small) request body, as a model server does before answering.
    let body_ok = request.into_body().collect().await.is_ok();
    let mut response = match (body_ok, path.as_str()) {
        (false, _) => with_status(StatusCode::BAD_REQUEST, "request body failed\n"),
        (true, "/v1/chat") => {
            let mut response =
                Response::new(Full::new(Bytes::from_static(CHAT_RESPONSE.as_bytes())).boxed());
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            response
        }
        (true, crate::sse_stream::PATH) => crate::sse_stream::response(),
        (true, "/stream") => {
            let mut response = Response::new(ndjson_stream(clock));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/x-ndjson"),
            );
            response
        }
        (true, _) => with_status(StatusCode::NOT_FOUND, "no such bench path\n"),
    };
    response
        .headers_mut()
        .insert("x-bench-upstream", http::HeaderValue::from_static("1"));
    Ok(response)
}

fn with_status(status: StatusCode, text: &'static str) -> Response<UpstreamBody> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

/// `STREAM_CHUNKS` lines on an absolute schedule (no drift), each `{"seq":k,"sent_ns":t}`.
fn ndjson_stream(clock: Instant) -> UpstreamBody {
    let start = tokio::time::Instant::now();
    let chunks = futures_util::stream::unfold(0u32, move |seq| async move {
        if seq >= STREAM_CHUNKS {
            return None;
        }
        tokio::time::sleep_until(start + CHUNK_GAP * seq).await;
        let sent_ns = clock.elapsed().as_nanos();
        let line = format!("{{\"seq\":{seq},\"sent_ns\":{sent_ns}}}\n");
        Some((Ok::<_, Infallible>(Frame::data(Bytes::from(line))), seq + 1))
    });
    StreamBody::new(chunks).boxed()
}

/// Bytes of the big body each way (`/big`): 1 GiB in 64 KiB chunks.
pub const BIG_BODY: u64 = 1 << 30;
const BIG_CHUNK: usize = 64 * 1024;

/// `/big`: drains the request body without keeping it (answering how many bytes came), or, for
/// a GET, answers with `BIG_BODY` bytes.
async fn big_body(request: Request<Incoming>) -> Response<UpstreamBody> {
    let upload = request.method() == http::Method::POST;
    let mut body = request.into_body();
    let mut received = 0u64;
    while let Some(Ok(frame)) = body.frame().await {
        received += frame.data_ref().map_or(0, |d| d.len() as u64);
    }
    if upload {
        return Response::new(Full::new(Bytes::from(received.to_string())).boxed());
    }
    let chunk = Bytes::from(vec![b'x'; BIG_CHUNK]);
    let chunks = futures_util::stream::iter(
        (0..BIG_BODY / BIG_CHUNK as u64)
            .map(move |_| Ok::<_, Infallible>(Frame::data(chunk.clone()))),
    );
    let mut response = Response::new(StreamBody::new(chunks).boxed());
    response.headers_mut().insert(
        http::header::CONTENT_LENGTH,
        http::HeaderValue::from(BIG_BODY),
    );
    response
}

/// Reads the `sent_ns` field of one stream line.
pub fn sent_ns_of(line: &[u8]) -> Option<u128> {
    let text = std::str::from_utf8(line).ok()?;
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    value.get("sent_ns")?.as_u64().map(u128::from)
}
