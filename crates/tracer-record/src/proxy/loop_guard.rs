//! Loop detection: every forwarded request carries a `Via` entry naming this tracer process and
//! the listener it passed (RFC 9110 §7.6.3: `received-protocol received-by`, the latter a
//! pseudonym); a request that arrives at a listener already named in its `Via` has come back
//! (a route whose upstream is its own listener, two routes pointing at each other) and is refused
//! with `508 Loop Detected` instead of being forwarded again.

use std::sync::OnceLock;

use http::header::VIA;
use http::{HeaderMap, HeaderValue, StatusCode, Version};

use super::Route;
use super::answers::error_response;
use super::context::ProxyBody;
use tracer_wire::ids::random_hex_id;

/// This process's part of every pseudonym: random, so that two tracers never take each other's
/// requests for their own.
fn process_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| random_hex_id(6))
}

/// The `received-by` pseudonym of the listener on `port` of this process.
fn pseudonym(port: u16) -> String {
    format!("tracer-{}-{port}", process_id())
}

/// Whether `headers` carry a `Via` entry received by the listener on `port` of this process.
pub(crate) fn came_back(headers: &HeaderMap, port: u16) -> bool {
    let ours = pseudonym(port);
    headers
        .get_all(VIA)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|entry| entry.split_whitespace().nth(1) == Some(ours.as_str()))
}

/// Adds this listener's `Via` entry to a request about to be forwarded.
pub(crate) fn mark(headers: &mut HeaderMap, version: Version, port: u16) {
    let protocol = match version {
        Version::HTTP_09 => "0.9",
        Version::HTTP_10 => "1.0",
        Version::HTTP_2 => "2",
        Version::HTTP_3 => "3",
        _ => "1.1",
    };
    if let Ok(value) = HeaderValue::from_str(&format!("{protocol} {}", pseudonym(port))) {
        headers.append(VIA, value);
    }
}

/// The answer to a request that came back: 508 with the JSON error naming the route.
pub(crate) fn refusal(route: &Route) -> Response {
    let message = format!(
        "loop detected: this request already passed through this listener of tracer ({}); \
         route `{}` forwards to {}, which leads back to tracer itself: point the route's \
         upstream at the real server",
        route.listen,
        route.name,
        route.shown_upstream()
    );
    tracing::warn!(route = %route.name, "refused a request that came back to the proxy");
    error_response(route, StatusCode::LOOP_DETECTED, &message)
}

type Response = http::Response<ProxyBody>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_marked_by_a_listener_is_known_there_and_only_there() {
        let mut headers = HeaderMap::new();
        headers.insert(VIA, HeaderValue::from_static("1.0 fred, 1.1 p.example.net"));
        assert!(!came_back(&headers, 8080));
        mark(&mut headers, Version::HTTP_11, 8080);
        assert!(came_back(&headers, 8080));
        assert!(!came_back(&headers, 8081), "another listener of the chain");
        let values: Vec<_> = headers.get_all(VIA).iter().collect();
        assert_eq!(values.len(), 2, "the entry is appended, the others kept");
        assert_eq!(
            values[1].to_str().unwrap(),
            format!("1.1 {}", pseudonym(8080))
        );
        // Another process's tracer on the same port is not this one.
        let mut other = HeaderMap::new();
        other.insert(
            VIA,
            HeaderValue::from_static("1.1 tracer-000000000000-8080"),
        );
        assert!(!came_back(&other, 8080));
    }
}
