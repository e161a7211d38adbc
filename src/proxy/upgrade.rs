//! `Upgrade` (WebSocket) requests: the handshake is forwarded with its `Connection: upgrade` and
//! `Upgrade` headers; when the upstream switches protocols, both sides become one two-way tunnel,
//! recorded as one hop: the handshake, the bytes each way (a bounded copy of each) and the time.

use bytes::Bytes;
use http::header::{CONNECTION, UPGRADE};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::context::{ProxyBody, RouteContext};
use super::headers::{record_headers, strip_hop_by_hop};
use super::tee::HopClock;
use crate::hop::Sink;
use crate::hop::{BodyCapture, HopEnd, HopState};

/// The protocol a request asks to switch to, when it asks (`Connection: upgrade` + `Upgrade`).
pub fn requested(headers: &HeaderMap) -> Option<HeaderValue> {
    let asks = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("upgrade"));
    asks.then(|| headers.get(UPGRADE).cloned()).flatten()
}

/// Puts the upgrade headers back after the hop-by-hop headers were stripped.
pub fn restore(headers: &mut HeaderMap, protocol: HeaderValue) {
    headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(UPGRADE, protocol);
}

/// Where the tunnel's record goes and how much of each direction it keeps.
struct TunnelRecord {
    recorder: Sink,
    end: Option<HopEnd>,
    clock: HopClock,
    max_body: usize,
    stop: tokio::sync::watch::Receiver<bool>,
}

/// Answers the client with the upstream's `101` and runs the tunnel once both sides have
/// switched; the hop ends when both directions have closed (or tracer stops).
pub fn switch(
    ctx: &RouteContext,
    client: OnUpgrade,
    protocol: HeaderValue,
    mut upstream: Response<hyper::body::Incoming>,
    end: Option<HopEnd>,
    clock: HopClock,
) -> Response<ProxyBody> {
    let protocol = upstream.headers().get(UPGRADE).cloned().unwrap_or(protocol);
    let mut headers = upstream.headers().clone();
    let end = end.map(|mut end| {
        end.status = Some(StatusCode::SWITCHING_PROTOCOLS.as_u16());
        end.response_headers = record_headers(&headers, ctx.settings.redact);
        end
    });
    strip_hop_by_hop(&mut headers);
    let record = TunnelRecord {
        recorder: ctx.recorder.clone(),
        end,
        clock,
        max_body: ctx.settings.max_body,
        stop: ctx.stop.clone(),
    };
    let upstream_side = hyper::upgrade::on(&mut upstream);
    tokio::spawn(async move {
        let (client, upstream) = match tokio::try_join!(client, upstream_side) {
            Ok(both) => both,
            Err(error) => {
                finish(
                    record,
                    Traffic::default(),
                    Some(format!("upgrade failed: {error}")),
                );
                return;
            }
        };
        let mut stop = record.stop.clone();
        let mut traffic = Traffic::default();
        let error = {
            let tunnel = run(
                TokioIo::new(client),
                TokioIo::new(upstream),
                record.max_body,
                &mut traffic,
            );
            tokio::select! {
                error = tunnel => error,
                // What crossed so far stays in the record.
                _ = stop.wait_for(|stopped| *stopped) => {
                    Some("tracer stopped while the tunnel was open".to_string())
                }
            }
        };
        finish(record, traffic, error);
    });
    restore(&mut headers, protocol);
    let mut response = Response::new(
        Empty::<Bytes>::new()
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    *response.headers_mut() = headers;
    response
}

/// What crossed the tunnel each way.
#[derive(Default)]
struct Traffic {
    to_upstream: BodyCapture,
    to_client: BodyCapture,
}

fn finish(record: TunnelRecord, traffic: Traffic, error: Option<String>) {
    let Some(mut end) = record.end else { return };
    end.state = Some(if error.is_some() {
        HopState::Aborted
    } else {
        HopState::Complete
    });
    end.error = error;
    end.request_body = traffic.to_upstream;
    end.response_body = traffic.to_client;
    end.response_ended_unix_ns = Some(record.clock.now_unix_ns());
    record.recorder.end(end);
}

/// Runs both directions to their ends; returns the first error either met.
async fn run<C, U>(client: C, upstream: U, max_body: usize, traffic: &mut Traffic) -> Option<String>
where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    let (client_read, client_write) = tokio::io::split(client);
    let (upstream_read, upstream_write) = tokio::io::split(upstream);
    let (up, down) = tokio::join!(
        pump(
            client_read,
            upstream_write,
            max_body,
            &mut traffic.to_upstream
        ),
        pump(
            upstream_read,
            client_write,
            max_body,
            &mut traffic.to_client
        )
    );
    up.or(down)
}

/// Copies one direction until its end, keeping the first `max_body` bytes; then closes the
/// other side's writing half so the peer sees the end too.
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    max_body: usize,
    seen: &mut BodyCapture,
) -> Option<String> {
    let mut buf = vec![0u8; 16 * 1024];
    let error = loop {
        let n = match from.read(&mut buf).await {
            Ok(0) => break None,
            Ok(n) => n,
            Err(error) => break Some(format!("tunnel read failed: {error}")),
        };
        seen.total_len += n as u64;
        let keep = max_body.saturating_sub(seen.bytes.len()).min(n);
        seen.bytes.extend_from_slice(&buf[..keep]);
        seen.truncated |= keep < n;
        if let Err(error) = to.write_all(&buf[..n]).await {
            break Some(format!("tunnel write failed: {error}"));
        }
    };
    let _ = to.shutdown().await;
    error
}

/// Takes the client's side of an upgrade out of the request, when it asks for one.
pub fn client_side<B>(request: &mut Request<B>) -> Option<(OnUpgrade, HeaderValue)> {
    let protocol = requested(request.headers())?;
    Some((hyper::upgrade::on(request), protocol))
}
