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
use super::ws_tee::{LiveMessages, Seen, is_websocket, settle};
use tracer_wire::hop::Sink;
use tracer_wire::hop::{HopEnd, HopState, WsDirection};

use super::headers::upgrade_requested as requested;

/// Puts the upgrade headers back after the hop-by-hop headers were stripped.
pub(crate) fn restore(headers: &mut HeaderMap, protocol: HeaderValue) {
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
    /// The agreed `Sec-WebSocket-Extensions` (empty when none).
    extensions: String,
    /// Where a recorded WebSocket's messages go as they complete.
    live: Option<LiveMessages>,
}

/// Answers the client with the upstream's `101` and runs the tunnel once both sides have
/// switched; the hop ends when both directions have closed (or tracer stops).
pub(crate) fn switch(
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
    let extensions = headers
        .get_all(http::header::SEC_WEBSOCKET_EXTENSIONS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(", ");
    let live = end
        .as_ref()
        .filter(|_| is_websocket(protocol.to_str().unwrap_or("")))
        .map(|end| LiveMessages::new(ctx.recorder.clone(), end.id.clone(), extensions.clone()));
    let record = TunnelRecord {
        recorder: ctx.recorder.clone(),
        live,
        end,
        clock,
        max_body: ctx.settings.max_body,
        stop: ctx.stop.clone(),
        extensions,
    };
    let traffic = Traffic::new(&protocol, &record);
    let upstream_side = hyper::upgrade::on(&mut upstream);
    tokio::spawn(async move {
        let mut traffic = traffic;
        let (client, upstream) = match tokio::try_join!(client, upstream_side) {
            Ok(both) => both,
            Err(error) => {
                finish(record, traffic, Some(format!("upgrade failed: {error}")));
                return;
            }
        };
        let mut stop = record.stop.clone();
        let error = {
            let tunnel = run(
                TokioIo::new(client),
                TokioIo::new(upstream),
                Copying {
                    max_body: record.max_body,
                    clock: &record.clock,
                    live: record.live.as_ref(),
                },
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
struct Traffic {
    to_upstream: Seen,
    to_client: Seen,
}

impl Traffic {
    fn new(protocol: &HeaderValue, record: &TunnelRecord) -> Self {
        let protocol = protocol.to_str().unwrap_or("");
        let seen = |direction| {
            Seen::for_protocol(protocol, &record.extensions, direction, record.max_body)
        };
        Self {
            to_upstream: seen(WsDirection::ToUpstream),
            to_client: seen(WsDirection::ToClient),
        }
    }
}

fn finish(record: TunnelRecord, traffic: Traffic, error: Option<String>) {
    let Some(mut end) = record.end else { return };
    end.state = Some(if error.is_some() {
        HopState::Aborted
    } else {
        HopState::Complete
    });
    end.error = error;
    let now = record.clock.now_unix_ns();
    let (request, response, websocket) = settle(
        traffic.to_upstream,
        traffic.to_client,
        &record.extensions,
        now,
        record.live.as_ref(),
    );
    end.request_body = request;
    end.response_body = response;
    end.websocket = websocket;
    end.response_ended_unix_ns = Some(now);
    record.recorder.end(end);
}

/// How each direction is copied: the bound, the clock, where messages go as they complete.
#[derive(Clone, Copy)]
struct Copying<'a> {
    max_body: usize,
    clock: &'a HopClock,
    live: Option<&'a LiveMessages>,
}

/// Runs both directions to their ends; returns the first error either met.
async fn run<C, U>(
    client: C,
    upstream: U,
    copying: Copying<'_>,
    traffic: &mut Traffic,
) -> Option<String>
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
            copying,
            &mut traffic.to_upstream
        ),
        pump(upstream_read, client_write, copying, &mut traffic.to_client)
    );
    up.or(down)
}

/// Copies one direction until its end, keeping what `seen` keeps (a WebSocket's messages, else
/// the first `max_body` bytes); then closes the other side's writing half so the peer sees the
/// end too.
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    copying: Copying<'_>,
    seen: &mut Seen,
) -> Option<String> {
    let mut buf = vec![0u8; 16 * 1024];
    let error = loop {
        let n = match from.read(&mut buf).await {
            Ok(0) => break None,
            Ok(n) => n,
            // A TLS peer that closes without close_notify (as many clients do once they are
            // done) ends its direction like a plain FIN: nothing it sent is missing.
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => break None,
            Err(error) => break Some(format!("tunnel read failed: {error}")),
        };
        // When the bytes crossed: as read, before the write (which may wait on a slow peer, who
        // may already be acting on them when it returns).
        let now = copying.clock.now_unix_ns();
        // Relayed first: reading the copy never holds the bytes up.
        let written = to.write_all(&buf[..n]).await;
        seen.observe(&buf[..n], copying.max_body, now, copying.live);
        if let Err(error) = written {
            break Some(format!("tunnel write failed: {error}"));
        }
    };
    let _ = to.shutdown().await;
    error
}

/// Takes the client's side of an upgrade out of the request, when it asks for one.
pub(crate) fn client_side<B>(request: &mut Request<B>) -> Option<(OnUpgrade, HeaderValue)> {
    let protocol = requested(request.headers())?;
    Some((hyper::upgrade::on(request), protocol))
}
