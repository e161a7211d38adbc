//! What the proxy answers itself when it cannot forward: a JSON error naming the route and
//! the upstream, and the words for why.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body_util::{BodyExt, Full};

use super::Route;
use super::context::ProxyBody;

/// The JSON error body every proxy-made response carries.
pub(crate) fn error_body(route: &Route, message: &str) -> Bytes {
    let body = serde_json::json!({
        "error": {
            "route": route.name,
            "upstream": route.shown_upstream(),
            "message": message,
        }
    });
    Bytes::from(body.to_string())
}

pub(crate) fn error_response(
    route: &Route,
    status: StatusCode,
    message: &str,
) -> Response<ProxyBody> {
    json_response(status, error_body(route, message))
}

/// A response the proxy makes itself: `status` with a JSON body.
pub(crate) fn json_response(status: StatusCode, body: Bytes) -> Response<ProxyBody> {
    let mut response = Response::new(
        Full::new(body)
            .map_err(|never: Infallible| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Why a request got no response head from its upstream: a TLS failure in words, else the
/// client error and its causes.
pub(crate) fn upstream_failure_words(error: &hyper_util::client::legacy::Error) -> String {
    match super::tls_words::tls_failure(error) {
        Some(words) => words,
        None => format!("upstream request failed: {}", describe_client_error(error)),
    }
}

fn describe_client_error(error: &hyper_util::client::legacy::Error) -> String {
    use std::error::Error;
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

pub(crate) fn humanize(duration: Duration) -> String {
    if duration.as_millis() < 1000 {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{} s", duration.as_secs())
    }
}
