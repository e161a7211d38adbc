//! Outbound HTTP for the agent: one pooled HTTP/1 client, requests with a timeout to the response
//! head, and a body reader with an idle timeout and a size cap, so every upstream failure becomes
//! an [`UpstreamError`] that names the upstream.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::config::ConfigError;
use super::upstream_error::{FailureKind, UpstreamError, error_chain};
use tracer_wire::agent_api::Upstream;
use tracer_wire::stream::RecordDecoder;
use tracer_wire::trace_context::{TRACEPARENT, TRACESTATE, TraceContext};

/// The most the agent keeps of one upstream body (a model reply, an MCP result).
const MAX_UPSTREAM_BODY: usize = 32 * 1024 * 1024;

/// What the agent calls itself on the wire.
const USER_AGENT: &str = concat!("notes-agent/", env!("CARGO_PKG_VERSION"));

pub(crate) type HttpClient = Client<HttpConnector, Full<Bytes>>;

pub fn http_client() -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(30))
        .build(connector)
}

/// Checks that `url` is an absolute `http://` URL (the agent speaks plain HTTP/1.1 only).
pub(crate) fn parse_http_url(what: &'static str, url: &str) -> Result<Uri, ConfigError> {
    let bad = |reason: &str| ConfigError::BadUrl {
        what,
        url: url.to_string(),
        reason: reason.to_string(),
    };
    let uri: Uri = url
        .parse()
        .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
    match uri.scheme_str() {
        Some("http") => {}
        Some("https") => {
            return Err(bad(
                "https is not supported; use http:// (e.g. through a local TLS-terminating proxy)",
            ));
        }
        _ => return Err(bad("it must start with http://")),
    }
    if uri.authority().is_none() {
        return Err(bad("it has no host"));
    }
    Ok(uri)
}

/// Builds a JSON POST with the agent's standard headers and the call's trace context.
pub(crate) fn json_post(
    uri: &Uri,
    body: Vec<u8>,
    trace: &TraceContext,
    extra: HeaderMap,
) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(Bytes::from(body)));
    *request.method_mut() = Method::POST;
    *request.uri_mut() = uri.clone();
    let headers = request.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::USER_AGENT, HeaderValue::from_static(USER_AGENT));
    if let Ok(value) = HeaderValue::from_str(&trace.parent.to_string()) {
        headers.insert(TRACEPARENT, value);
    }
    if let Some(state) = &trace.state
        && let Ok(value) = HeaderValue::from_str(state)
    {
        headers.insert(TRACESTATE, value);
    }
    for (name, value) in extra.iter() {
        headers.insert(name.clone(), value.clone());
    }
    request
}

/// Sends a request and waits at most `timeout` for the response head.
pub(crate) async fn send(
    client: &HttpClient,
    request: Request<Full<Bytes>>,
    timeout: Duration,
    upstream: &Upstream,
) -> Result<Response<Incoming>, UpstreamError> {
    match tokio::time::timeout(timeout, client.request(request)).await {
        Err(_) => Err(UpstreamError::new(
            FailureKind::Timeout,
            upstream,
            format!("no response within {}", seconds(timeout)),
        )),
        Ok(Err(error)) => {
            let kind = if error.is_connect() {
                FailureKind::Unreachable
            } else {
                FailureKind::Failed
            };
            Err(UpstreamError::new(kind, upstream, error_chain(&error)))
        }
        Ok(Ok(response)) => Ok(response),
    }
}

/// Reads a response body chunk by chunk; each chunk must come within the idle timeout.
pub(crate) struct BodyReader {
    body: Incoming,
    idle_timeout: Duration,
    seen: usize,
    upstream: Upstream,
    /// The body's end was read (and handed to a decoder by `next_records`).
    ended: bool,
}

impl BodyReader {
    pub(crate) fn new(body: Incoming, idle_timeout: Duration, upstream: &Upstream) -> Self {
        Self {
            body,
            idle_timeout,
            seen: 0,
            upstream: upstream.clone(),
            ended: false,
        }
    }

    /// The next data chunk, or `None` at the end of the body.
    async fn next_chunk(&mut self) -> Result<Option<Bytes>, UpstreamError> {
        loop {
            let frame = match tokio::time::timeout(self.idle_timeout, self.body.frame()).await {
                Err(_) => {
                    return Err(UpstreamError::new(
                        FailureKind::Timeout,
                        &self.upstream,
                        format!(
                            "the body stalled: nothing for {} after {} bytes",
                            seconds(self.idle_timeout),
                            self.seen
                        ),
                    ));
                }
                Ok(None) => return Ok(None),
                Ok(Some(Err(error))) => {
                    return Err(UpstreamError::new(
                        FailureKind::Failed,
                        &self.upstream,
                        format!("reading the body: {}", error_chain(&error)),
                    ));
                }
                Ok(Some(Ok(frame))) => frame,
            };
            if let Ok(data) = frame.into_data() {
                self.seen += data.len();
                if self.seen > MAX_UPSTREAM_BODY {
                    return Err(UpstreamError::new(
                        FailureKind::Failed,
                        &self.upstream,
                        format!("the body is larger than {MAX_UPSTREAM_BODY} bytes"),
                    ));
                }
                return Ok(Some(data));
            }
        }
    }

    /// The records `decoder` makes of the next chunk, and at the end of the body the one it held
    /// unfinished; `None` once the body is done.
    pub(crate) async fn next_records<D: RecordDecoder>(
        &mut self,
        decoder: &mut D,
    ) -> Result<Option<Vec<D::Record>>, UpstreamError> {
        if self.ended {
            return Ok(None);
        }
        match self.next_chunk().await? {
            Some(chunk) => Ok(Some(decoder.push(&chunk))),
            None => {
                self.ended = true;
                Ok(Some(decoder.finish().into_iter().collect()))
            }
        }
    }

    /// The whole body (bounded by [`MAX_UPSTREAM_BODY`]).
    pub(crate) async fn read_to_end(mut self) -> Result<Vec<u8>, UpstreamError> {
        let mut all = Vec::new();
        while let Some(chunk) = self.next_chunk().await? {
            all.extend_from_slice(&chunk);
        }
        Ok(all)
    }
}

/// The content type of a response, lower-cased, without parameters.
pub(crate) fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// A short excerpt of a body for an error message.
pub(crate) fn excerpt(body: &[u8]) -> String {
    const MAX: usize = 300;
    // On one line: it goes into an error message and a log line.
    let text = tracer_wire::safe_text::log_line(&String::from_utf8_lossy(body));
    let text = text.as_str();
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

pub(crate) fn seconds(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_urls_are_accepted() {
        assert!(parse_http_url("--mcp", "http://127.0.0.1:8080/mcp").is_ok());
        let https = parse_http_url("--model-url", "https://api.openai.com/v1").unwrap_err();
        assert!(https.to_string().contains("https is not supported"));
        assert!(parse_http_url("--mcp", "127.0.0.1:8080/mcp").is_err());
        assert!(parse_http_url("--mcp", "/mcp").is_err());
    }

    #[test]
    fn excerpts_are_short() {
        assert_eq!(excerpt(b"  {\"error\":\"x\"}\n"), "{\"error\":\"x\"}");
        assert_eq!(excerpt("é".repeat(400).as_bytes()).chars().count(), 301);
    }
}
