//! Forwarding one request: build the upstream request, stream both bodies through tees, answer
//! failures with JSON, and send the hop's start and end to the recorder.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::header::CONTENT_LENGTH;
use http::{Request, Response, StatusCode};
use http_body::Body as _;
use http_body_util::BodyExt;
use hyper::body::Incoming;

use super::answers::{error_body, error_response, humanize, upstream_failure_words};
use super::body_end::{ResponseFraming, body_end};
use super::context::{ProxyBody, RequestBody, RouteContext};
use super::headers::{
    body_redactor, ensure_traceparent, join_upstream, record_headers, record_url, redact_query,
    strip_for_upstream, strip_hop_by_hop,
};
use super::tee::{BodyOutcome, Captured, HopClock, PieceOut, TeeBody, settle_unpolled};
use super::{Route, loop_guard, steer, upgrade};
use tracer_wire::hop::Sink;
use tracer_wire::hop::{BodyCapture, BodySide, HopEnd, HopStart, HopState, Role, Transport};
use tracer_wire::ids::hop_id;
use tracer_wire::stream_end::EndWatch;

/// Ends a hop as aborted if the request handling is dropped before it hands the hop over
/// (the client went away while waiting for the upstream's response head).
struct EndGuard {
    recorder: Sink,
    end: Option<HopEnd>,
}

impl EndGuard {
    /// Takes the hop's end over (to finish it elsewhere); `None` when the hop is not recorded.
    fn disarm(mut self) -> Option<HopEnd> {
        self.end.take()
    }

    /// Completes the hop now with what `fill` sets.
    fn finish(mut self, fill: impl FnOnce(&mut HopEnd)) {
        if let Some(mut end) = self.end.take() {
            fill(&mut end);
            self.recorder.end(end);
        }
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Some(mut end) = self.end.take() {
            end.state = Some(HopState::Aborted);
            end.error = Some("client went away before the response".into());
            self.recorder.end(end);
        }
    }
}

pub(crate) async fn handle(
    ctx: Arc<RouteContext>,
    peer: SocketAddr,
    request: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    handle_at(
        ctx,
        peer,
        request.map(BodyExt::boxed_unsync),
        HopClock::start(),
    )
    .await
}

/// Forwards one request whose hop started at `clock` (the forward proxy starts it before it
/// reads what it needs to choose the route).
pub(crate) async fn handle_at(
    ctx: Arc<RouteContext>,
    peer: SocketAddr,
    mut request: Request<RequestBody>,
    clock: HopClock,
) -> Result<Response<ProxyBody>, Infallible> {
    let settings = &ctx.settings;
    let upgrade = upgrade::client_side(&mut request);
    let (mut parts, body) = request.into_parts();
    let port = ctx.route.listen.port();
    if loop_guard::came_back(&parts.headers, port) {
        // Not recorded: the hop that sent it here is, and gets this answer as its response.
        return Ok(loop_guard::refusal(&ctx.route));
    }
    let (body, steered_upstream) = match &settings.steer {
        Some(steer) if upgrade.is_none() => {
            match steer::steered(steer, &ctx.route, &mut parts, body, steer::MAX_STEERED).await {
                Ok(steered) => steered,
                Err(message) => {
                    return Ok(error_response(
                        &ctx.route,
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &message,
                    ));
                }
            }
        }
        _ => (body, None),
    };
    let body_of_unknown_length = !body.is_end_stream() && body.size_hint().exact().is_none();
    let id = match ctx.route.role {
        Role::Agent => ensure_traceparent(&mut parts.headers),
        _ => hop_id(),
    };
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| "/".to_string(), |pq| pq.as_str().to_string());
    let upstream_uri = join_upstream(
        steered_upstream.as_ref().unwrap_or(&ctx.route.upstream),
        &path,
    );
    let recorded = ctx.recorder.start(HopStart {
        id: id.clone(),
        route: ctx.route.name.clone(),
        role: ctx.route.role,
        transport: Transport::Http,
        peer: peer.to_string(),
        method: parts.method.to_string(),
        path: redact_query(&path, settings.redact),
        url: upstream_uri.as_ref().map_or_else(
            |_| String::new(),
            |uri| record_url(&uri.to_string(), settings.redact),
        ),
        request_headers: record_headers(&parts.headers, settings.redact),
        started_unix_ns: clock.started_unix_ns,
        run_id: parts
            .extensions
            .get::<super::client_process::ClientProcess>()
            .map(|process| process.0.clone()),
    });
    let guard = EndGuard {
        recorder: ctx.recorder.clone(),
        end: recorded.then(|| HopEnd {
            id: id.clone(),
            ..HopEnd::default()
        }),
    };
    let (request_body, request_seen) = tee_request(
        body,
        clock,
        settings.max_body,
        recorded.then(|| ctx.recorder.clone()),
        id.clone(),
    );
    let request_body = request_body.with_redactor(body_redactor(&parts.headers, settings.redact));
    let failure = match upstream_uri {
        Err(message) => {
            drop(request_body);
            Err((StatusCode::BAD_REQUEST, message))
        }
        Ok(uri) => {
            parts.uri = uri;
            strip_for_upstream(&mut parts.headers, body_of_unknown_length);
            loop_guard::mark(&mut parts.headers, parts.version, port);
            if let Some((_, protocol)) = &upgrade {
                upgrade::restore(&mut parts.headers, protocol.clone());
            }
            let upstream_request = Request::from_parts(parts, request_body);
            let answer = tokio::time::timeout(
                settings.upstream_timeout,
                ctx.client.request(upstream_request),
            )
            .await;
            match answer {
                Ok(Ok(response)) => Ok(response),
                Ok(Err(error)) => Err((StatusCode::BAD_GATEWAY, upstream_failure_words(&error))),
                Err(_) => Err((
                    StatusCode::GATEWAY_TIMEOUT,
                    format!(
                        "no response head from the upstream within {}",
                        humanize(settings.upstream_timeout)
                    ),
                )),
            }
        }
    };
    let upstream_response = match failure {
        Ok(response) => response,
        Err((status, message)) => {
            let response = error_response(&ctx.route, status, &message);
            return Ok(finish_failed(
                &ctx.route,
                settings.max_body,
                guard,
                request_seen,
                message,
                response,
            )
            .await);
        }
    };
    let head_unix_ns = clock.now_unix_ns();
    if let Some((client_side, protocol)) = upgrade
        && upstream_response.status() == StatusCode::SWITCHING_PROTOCOLS
    {
        let end = guard.disarm().map(|mut end| {
            end.response_head_unix_ns = Some(head_unix_ns);
            end
        });
        return Ok(upgrade::switch(
            &ctx,
            client_side,
            protocol,
            upstream_response,
            end,
            clock,
        ));
    }
    let framing = ResponseFraming::of(&upstream_response);
    let (mut response_parts, upstream_body) = upstream_response.into_parts();
    let status = response_parts.status.as_u16();
    let response_headers = record_headers(&response_parts.headers, settings.redact);
    let response_redactor = body_redactor(&response_parts.headers, settings.redact);
    let end_watch = EndWatch::for_body(
        header_str(&response_parts.headers, http::header::CONTENT_TYPE),
        header_str(&response_parts.headers, http::header::CONTENT_ENCODING),
    );
    strip_hop_by_hop(&mut response_parts.headers);
    let response_was_empty = upstream_body.is_end_stream();
    let end = guard.disarm().map(|mut end| {
        end.status = Some(status);
        end.response_headers = response_headers;
        end.response_head_unix_ns = Some(head_unix_ns);
        end
    });
    let recorder = ctx.recorder.clone();
    let redact = settings.redact;
    let mut request_seen = request_seen;
    let pieces = end
        .is_some()
        .then(|| PieceOut::new(ctx.recorder.clone(), id.clone(), BodySide::Response));
    let unmeasured = framing.unmeasured();
    // A live viewer reads the answer as it comes, when it is not compressed.
    let live = settings
        .live
        .clone()
        .filter(|_| {
            !response_parts
                .headers
                .contains_key(http::header::CONTENT_ENCODING)
        })
        .map(|tap| super::live_tap::HopTap {
            tap,
            hop_id: id.clone(),
        });
    let max_body = settings.max_body;
    let response_body = TeeBody::with_callback(
        upstream_body,
        clock,
        settings.max_body,
        settings.max_chunks,
        move |seen| {
            let Some(end) = end else { return };
            let response = settle_unpolled(seen, response_was_empty);
            // Usually the request ended long ago: the hop ends now, before the client has the
            // last bytes, so its next request is always recorded after this answer.
            match request_seen.try_recv() {
                Ok(request) if !unread_when_answered(request.as_ref()) => {
                    recorder.end(finished_hop(end, request, response, &framing, redact));
                }
                ready => {
                    tokio::spawn(async move {
                        let request = match ready {
                            Ok(request) => request,
                            Err(_) => request_seen.await.ok().flatten(),
                        };
                        let request = read_unread(request, max_body).await;
                        recorder.end(finished_hop(end, request, response, &framing, redact));
                    });
                }
            }
        },
    );
    let response_body = match pieces {
        Some(out) => response_body.with_pieces(out),
        None => response_body,
    }
    .with_redactor(response_redactor)
    .with_end_watch(end_watch)
    .with_live(live)
    .end_cleanly_after_end_event(unmeasured);
    let response_body = if status == 304 && response_parts.headers.contains_key(CONTENT_LENGTH) {
        // hyper drops the Content-Length of a bodiless answer unless its body might have bytes.
        super::bodiless::KeepLength(response_body).boxed_unsync()
    } else {
        response_body.boxed_unsync()
    };
    Ok(Response::from_parts(response_parts, response_body))
}

fn header_str(headers: &http::HeaderMap, name: http::header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The request body's capture, once the body ends (or is dropped).
type RequestWatch = tokio::sync::oneshot::Receiver<Option<Captured>>;

/// A hop's end from what both tees saw.
fn finished_hop(
    mut end: HopEnd,
    request: Option<Captured>,
    response: Captured,
    framing: &ResponseFraming,
    redact: bool,
) -> HopEnd {
    apply_request(&mut end, request);
    if let Some(trailers) = &response.trailers {
        end.response_trailers = record_headers(trailers, redact);
    }
    let ended = body_end(framing, &response);
    end.state = Some(ended.state);
    end.error = ended.error;
    end.note = ended.note;
    end.response_first_byte_unix_ns = response.first_byte_unix_ns;
    end.response_ended_unix_ns = Some(response.ended_unix_ns);
    end.response_body = response.body;
    end.chunks = response.chunks;
    end.chunks_truncated = response.chunks_truncated;
    end
}

/// Tees the request body. When it ends whole it is recorded at once (before the response), so
/// grouping can read a request while its answer is still awaited; its capture then goes to the
/// hop's end through the returned receiver.
fn tee_request(
    body: RequestBody,
    clock: HopClock,
    max_body: usize,
    recorder: Option<Sink>,
    id: String,
) -> (TeeBody<RequestBody>, RequestWatch) {
    let was_empty = body.is_end_stream();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let pieces = recorder
        .clone()
        .map(|sink| PieceOut::new(sink, id.clone(), BodySide::Request));
    let tee = TeeBody::with_callback(body, clock, max_body, 0, move |seen| {
        let seen = settle_unpolled(seen, was_empty);
        if let Some(recorder) = recorder
            && seen.outcome == BodyOutcome::Complete
        {
            recorder.request_read(&id, &seen.body, seen.ended_unix_ns);
        }
        let _ = tx.send(Some(seen));
    });
    let tee = match pieces {
        Some(out) => tee.with_pieces(out),
        None => tee,
    };
    (tee, rx)
}

/// Whether the upstream answered without reading the whole request: an HTTP/2 client then
/// drops the body's unsent part, which the client did send to tracer.
fn unread_when_answered(request: Option<&Captured>) -> bool {
    request.is_some_and(|seen| seen.outcome == BodyOutcome::Dropped)
}

/// The request as the client sent it: what the upstream left unread is read (bounded) into the
/// capture, so the record keeps the body the client sent.
async fn read_unread(mut request: Option<Captured>, max_body: usize) -> Option<Captured> {
    if let Some(seen) = request
        .as_mut()
        .filter(|seen| seen.outcome == BodyOutcome::Dropped)
    {
        seen.read_leftover(max_body, Duration::from_secs(1)).await;
    }
    request
}

fn apply_request(end: &mut HopEnd, request: Option<Captured>) {
    if let Some(seen) = request {
        end.request_ended_unix_ns = Some(seen.ended_unix_ns);
        end.request_body = seen.body;
    }
}

/// A request that got no upstream response: record it failed and answer with `response`.
async fn finish_failed(
    route: &Route,
    max_body: usize,
    guard: EndGuard,
    request_seen: RequestWatch,
    message: String,
    response: Response<ProxyBody>,
) -> Response<ProxyBody> {
    // The request body was dropped with the failed upstream request: read what the client
    // still sends (bounded) so the record keeps the request that could not be delivered.
    let mut request = tokio::time::timeout(Duration::from_secs(1), request_seen)
        .await
        .ok()
        .and_then(Result::ok)
        .flatten();
    if let Some(seen) = request.as_mut() {
        seen.read_leftover(max_body, Duration::from_secs(5)).await;
    }
    let status = response.status().as_u16();
    let response_headers = record_headers(response.headers(), false);
    let body = error_body(route, &message);
    // A request body that broke off is the client's doing, not the upstream's.
    let (state, message) = match request.as_ref().map(|seen| &seen.outcome) {
        Some(BodyOutcome::Broken(cause)) => (
            HopState::Aborted,
            format!("the client's request body broke off: {cause}"),
        ),
        _ => (HopState::Failed, message),
    };
    guard.finish(|end| {
        apply_request(end, request);
        end.state = Some(state);
        end.status = Some(status);
        end.error = Some(message);
        end.response_headers = response_headers;
        end.response_head_unix_ns = Some(tracer_wire::hop::now_unix_ns());
        end.response_ended_unix_ns = end.response_head_unix_ns;
        end.response_body = BodyCapture::whole(body.to_vec());
    });
    response
}
