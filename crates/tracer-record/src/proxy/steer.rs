//! Fork mode (`tracer fork`): each request is read whole, then told which body to send and where.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderValue, Uri};
use http_body_util::{BodyExt, Full, Limited};

use super::context::RequestBody;
use tracer_wire::hop::Role;

/// One request as the steer sees it: whole, before it is recorded or sent.
#[derive(Debug)]
pub struct SteerRequest<'a> {
    /// The route it came in on (its name, as the trace records it).
    pub route: &'a str,
    pub role: Role,
    pub method: &'a str,
    /// The path and query.
    pub path: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

/// Where a request goes and with what; the defaults change nothing.
#[derive(Debug, Default, Clone)]
pub struct Steering {
    /// The body sent (and recorded) instead of the one the client sent.
    pub body: Option<Bytes>,
    /// The base URL the request goes to instead of the route's upstream.
    pub upstream: Option<Uri>,
}

/// Decides, request by request, what a proxy in fork mode sends and where.
pub trait Steer: Send + Sync {
    fn steer(&self, request: &SteerRequest<'_>) -> Steering;
}

/// The largest request fork mode reads whole.
pub(crate) const MAX_STEERED: usize = 64 * 1024 * 1024;

/// A request read whole and steered: its (maybe new) body and upstream. A body that cannot be
/// read (larger than `max`, or broken off) is an error for the caller to answer.
pub(crate) async fn steered(
    steer: &Arc<dyn Steer>,
    route: &super::Route,
    parts: &mut http::request::Parts,
    body: RequestBody,
    max: usize,
) -> Result<(RequestBody, Option<Uri>), String> {
    let bytes = Limited::new(body, max)
        .collect()
        .await
        .map_err(|e| format!("fork mode reads each request whole, and this one failed: {e}"))?
        .to_bytes();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |pq| pq.as_str())
        .to_string();
    let steering = steer.steer(&SteerRequest {
        route: &route.name,
        role: route.role,
        method: parts.method.as_str(),
        path: &path,
        headers: &parts.headers,
        body: &bytes,
    });
    let bytes = match steering.body {
        Some(edited) => {
            parts.headers.remove(TRANSFER_ENCODING);
            parts
                .headers
                .insert(CONTENT_LENGTH, HeaderValue::from(edited.len()));
            edited
        }
        None => bytes,
    };
    let body = Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync();
    Ok((body, steering.upstream))
}
