//! Header handling: what is stripped before forwarding, what is redacted in the record.

use http::header::{
    CONNECTION, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, EXPECT, HOST, TE, TRANSFER_ENCODING,
};
use http::{HeaderMap, HeaderValue};

use http::Uri;

use tracer_wire::hop::Header;
use tracer_wire::ids::hop_id;
use tracer_wire::redact::BodyRedactor;
use tracer_wire::trace_context::TraceParent;

pub(crate) use tracer_wire::redact::redact_query;

/// Headers that belong to one connection, not to the message (RFC 9110, 7.6.1). `Trailer`
/// is not one: it tells the next hop which trailer fields the body ends with.
const HOP_BY_HOP: [&str; 7] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "te",
    "transfer-encoding",
    "upgrade",
];

/// The record's copy of a URL: userinfo and secret query parameters redacted when asked.
pub(crate) fn record_url(url: &str, redact: bool) -> String {
    if redact {
        tracer_wire::redact::redact_url(url)
    } else {
        url.to_string()
    }
}

/// What a body's kept copy goes through, from its message's headers (none unless `redact`).
pub(crate) fn body_redactor(headers: &HeaderMap, redact: bool) -> Option<BodyRedactor> {
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    redact
        .then(|| BodyRedactor::for_body(text(CONTENT_TYPE), text(CONTENT_ENCODING)))
        .flatten()
}

/// Removes the hop-by-hop headers, and those that `Connection` names, before forwarding.
pub(crate) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<String> = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty())
        .collect();
    for name in HOP_BY_HOP
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(name);
    }
}

/// Prepares a request's headers for the upstream: hop-by-hop headers go, `Host` is left for the
/// client to set to the upstream, and `Expect` goes because this side already answered it.
/// A client that accepts trailers still says so (the proxy passes them on), and a body of
/// unknown length stays chunked whatever the method (hyper would send a GET without it).
pub(crate) fn strip_for_upstream(headers: &mut HeaderMap, body_of_unknown_length: bool) {
    let accepts_trailers = headers
        .get_all(TE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case("trailers"));
    strip_hop_by_hop(headers);
    headers.remove(HOST);
    headers.remove(EXPECT);
    if accepts_trailers {
        headers.insert(TE, HeaderValue::from_static("trailers"));
    }
    if body_of_unknown_length {
        headers.remove(CONTENT_LENGTH);
        headers.insert(TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
    }
}

/// The record's copy of a header map, in wire order, secrets redacted when asked.
pub(crate) fn record_headers(headers: &HeaderMap, redact: bool) -> Vec<Header> {
    headers
        .iter()
        .map(|(name, value)| {
            let value = if redact {
                tracer_wire::redact::header_value(name.as_str(), value.as_bytes())
            } else {
                value.as_bytes().to_vec()
            };
            Header::new(name.as_str(), value)
        })
        .collect()
}

/// On an `agent` route every request carries a `traceparent`: the client's own when valid,
/// else a new one whose trace id is the hop's id. Returns the hop's id.
pub(crate) fn ensure_traceparent(headers: &mut http::HeaderMap) -> String {
    let inbound = headers
        .get(TRACEPARENT)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| TraceParent::parse(v).ok());
    if inbound.is_some() {
        return hop_id();
    }
    let root = TraceParent::new_root();
    headers.remove(TRACESTATE);
    if let Ok(value) = http::HeaderValue::from_str(&root.to_string()) {
        headers.insert(TRACEPARENT, value);
    }
    root.trace_id_hex()
}

const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";

/// Joins the request's path and query onto the upstream's base path.
pub(crate) fn join_upstream(upstream: &Uri, path_and_query: &str) -> Result<Uri, String> {
    let base = upstream.path().trim_end_matches('/');
    let joined = format!("{base}{path_and_query}");
    let mut parts = upstream.clone().into_parts();
    parts.path_and_query = Some(
        joined
            .parse()
            .map_err(|e| format!("request target `{path_and_query}` cannot be forwarded: {e}"))?,
    );
    Uri::from_parts(parts).map_err(|e| format!("building the upstream URL: {e}"))
}

/// The protocol a request asks to switch to, when it asks (`Connection: upgrade` + `Upgrade`).
pub(crate) fn upgrade_requested(headers: &HeaderMap) -> Option<HeaderValue> {
    let asks = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("upgrade"));
    asks.then(|| headers.get(http::header::UPGRADE).cloned())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracer_wire::redact::is_secret_header;

    #[test]
    fn secrets_are_redacted_by_name() {
        for name in [
            "Authorization",
            "cookie",
            "X-Api-Key",
            "x-auth-token",
            "Client-Secret",
            "x-goog-api-key",
            "anthropic-api-key",
            "Set-Cookie",
            "proxy-authorization",
            "mcp-session-id",
        ] {
            assert!(is_secret_header(name), "{name}");
        }
        for name in [
            "content-type",
            "traceparent",
            "mcp-protocol-version",
            "accept",
        ] {
            assert!(!is_secret_header(name), "{name}");
        }
    }

    #[test]
    fn secret_query_parameters_are_redacted() {
        assert_eq!(
            redact_query(
                "/v1beta/models/g:generateContent?key=AIza123&alt=sse&API_KEY=x&sig=y",
                true
            ),
            "/v1beta/models/g:generateContent?key=[redacted]&alt=sse&API_KEY=[redacted]&sig=[redacted]"
        );
        assert_eq!(
            redact_query("https://h/p?access_token=t&apikey=a&q=1#f", true),
            "https://h/p?access_token=[redacted]&apikey=[redacted]&q=1#f"
        );
        assert_eq!(redact_query("/p?key=1", false), "/p?key=1");
        assert_eq!(
            redact_query("/p?monkey=1&keys=2", true),
            "/p?monkey=1&keys=2"
        );
    }

    #[test]
    fn hop_by_hop_and_connection_named_headers_are_stripped() {
        let mut headers = HeaderMap::new();
        headers.insert("connection", "keep-alive, x-private".parse().unwrap());
        headers.insert("x-private", "1".parse().unwrap());
        headers.insert("transfer-encoding", "chunked".parse().unwrap());
        headers.insert("host", "proxy:1".parse().unwrap());
        headers.insert("expect", "100-continue".parse().unwrap());
        headers.insert("content-type", "application/json".parse().unwrap());
        strip_for_upstream(&mut headers, false);
        let left: Vec<&str> = headers.keys().map(|k| k.as_str()).collect();
        assert_eq!(left, ["content-type"]);
        headers.insert("te", "gzip, trailers".parse().unwrap());
        strip_for_upstream(&mut headers, true);
        assert_eq!(headers["te"], "trailers");
        assert_eq!(headers["transfer-encoding"], "chunked");
    }

    #[test]
    fn paths_join_onto_the_upstream_base() {
        let up: Uri = "http://127.0.0.1:8080".parse().unwrap();
        assert_eq!(
            join_upstream(&up, "/mcp?x=1").unwrap().to_string(),
            "http://127.0.0.1:8080/mcp?x=1"
        );
        let up: Uri = "http://127.0.0.1:8000/v1/".parse().unwrap();
        assert_eq!(
            join_upstream(&up, "/chat/completions").unwrap().to_string(),
            "http://127.0.0.1:8000/v1/chat/completions"
        );
    }
}
