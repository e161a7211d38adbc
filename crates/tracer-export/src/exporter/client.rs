//! One OTLP/HTTP export request and what its answer means (OTLP spec: retry only 429, 502, 503,
//! 504 and transport failures, honouring `Retry-After`; a 200 may report rejected spans), and the
//! retry loop around it with exponential backoff.

use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use prost::Message;
use tokio::sync::watch;

use super::config::OtlpConfig;
use crate::otlp::{Encoding, Resource, Span, proto};
use tracer_trace::words::shorten;

/// How much of a receiver's answer is read.
const ANSWER_LIMIT: usize = 64 * 1024;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// A `Retry-After` longer than this is cut to it.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Attempt {
    /// 2xx; `rejected` is the receiver's partial-success count and message, if it sent one.
    Delivered { rejected: Option<(i64, String)> },
    /// Worth trying again (after `after` when the receiver said so).
    Retry {
        after: Option<Duration>,
        reason: String,
    },
    /// Must not be retried (bad data, unauthorized, too large...).
    Refused { reason: String },
}

/// Posts export requests to one receiver.
#[derive(Clone)]
pub(crate) struct OtlpClient {
    http: Client<HttpConnector, Full<Bytes>>,
    config: std::sync::Arc<OtlpConfig>,
}

impl OtlpClient {
    pub(crate) fn new(config: OtlpConfig) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(config.timeout));
        Self {
            http: Client::builder(TokioExecutor::new()).build(connector),
            config: std::sync::Arc::new(config),
        }
    }

    pub(crate) fn config(&self) -> &OtlpConfig {
        &self.config
    }

    /// The request body for `spans`: encoded, then gzipped when configured.
    pub(crate) fn body(&self, resource: &Resource, spans: &[Span]) -> Bytes {
        let raw = self.config.encoding.body(resource, spans);
        if !self.config.gzip {
            return Bytes::from(raw);
        }
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        match encoder.write_all(&raw).and_then(|()| encoder.finish()) {
            Ok(zipped) => Bytes::from(zipped),
            // Writing to a Vec does not fail; should it, the body goes uncompressed.
            Err(_) => Bytes::from(raw),
        }
    }

    fn is_gzipped(&self, body: &Bytes) -> bool {
        self.config.gzip && body.starts_with(&[0x1f, 0x8b])
    }

    /// One POST of `body`, given at most `timeout`.
    pub(crate) async fn post(&self, body: Bytes, timeout: Duration) -> Attempt {
        let mut request = hyper::Request::post(self.config.url.as_str())
            .header(
                http::header::CONTENT_TYPE,
                self.config.encoding.content_type(),
            )
            .header(
                http::header::USER_AGENT,
                concat!("tracer/", env!("CARGO_PKG_VERSION")),
            );
        if self.is_gzipped(&body) {
            request = request.header(http::header::CONTENT_ENCODING, "gzip");
        }
        for (name, value) in &self.config.headers {
            request = request.header(name, value);
        }
        let request = match request.body(Full::new(body)) {
            Ok(request) => request,
            Err(error) => {
                return Attempt::Refused {
                    reason: format!("building the request: {error}"),
                };
            }
        };
        let answer = tokio::time::timeout(timeout, async {
            let response = self.http.request(request).await?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, ANSWER_LIMIT)
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            Ok::<_, hyper_util::client::legacy::Error>((parts, body))
        })
        .await;
        match answer {
            Err(_) => Attempt::Retry {
                after: None,
                reason: format!("no answer within {timeout:?}"),
            },
            Ok(Err(error)) => Attempt::Retry {
                after: None,
                reason: describe(&error),
            },
            Ok(Ok((parts, body))) => {
                judge(parts.status, &parts.headers, &body, self.config.encoding)
            }
        }
    }

    /// Posts `body` until it is delivered, refused, or retrying would pass `retry_for` or the
    /// shutdown deadline (`deadline` holds it once shutdown begins).
    pub(crate) async fn deliver(
        &self,
        body: Bytes,
        deadline: &mut watch::Receiver<Option<Instant>>,
    ) -> Result<Option<(i64, String)>, String> {
        let give_up = Instant::now() + self.config.retry_for;
        let mut backoff = FIRST_BACKOFF;
        let mut attempts = 0u32;
        loop {
            let limit = (*deadline.borrow()).map_or(give_up, |d| d.min(give_up));
            let left = limit.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "not delivered before shutdown ({attempts} attempts)"
                ));
            }
            attempts += 1;
            let reason = match self.post(body.clone(), self.config.timeout.min(left)).await {
                Attempt::Delivered { rejected } => return Ok(rejected),
                Attempt::Refused { reason } => return Err(reason),
                Attempt::Retry { after, reason } => {
                    let wait = after.unwrap_or_else(|| jitter(backoff));
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    let limit = (*deadline.borrow()).map_or(give_up, |d| d.min(give_up));
                    if Instant::now() + wait <= limit {
                        tracing::debug!(%reason, ?wait, "OTLP export: retrying");
                        let sleep = tokio::time::sleep(wait);
                        tokio::pin!(sleep);
                        // A shutdown that begins while waiting cuts the wait to its deadline.
                        loop {
                            tokio::select! {
                                _ = &mut sleep => break,
                                changed = deadline.changed() => {
                                    if changed.is_err() { break; }
                                    if let Some(d) = *deadline.borrow()
                                        && d < Instant::now() + wait
                                    {
                                        return Err(format!("{reason} ({attempts} attempts, then shutdown)"));
                                    }
                                }
                            }
                        }
                        continue;
                    }
                    reason
                }
            };
            return Err(format!("{reason} (gave up after {attempts} attempts)"));
        }
    }
}

/// What a receiver's status, headers and body say about an attempt.
fn judge(
    status: http::StatusCode,
    headers: &http::HeaderMap,
    body: &[u8],
    encoding: Encoding,
) -> Attempt {
    if status.is_success() {
        let rejected = match encoding {
            Encoding::Protobuf => proto::rejected(body),
            Encoding::Json => json_rejected(body),
        };
        return Attempt::Delivered { rejected };
    }
    let reason = format!("{} from the receiver{}", status, error_message(body));
    match status.as_u16() {
        429 | 502 | 503 | 504 => Attempt::Retry {
            after: headers
                .get(http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(retry_after),
            reason,
        },
        _ => Attempt::Refused { reason },
    }
}

/// `Retry-After`: seconds, or an HTTP date; capped at a minute.
fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => httpdate::parse_http_date(value)
            .ok()?
            .duration_since(SystemTime::now())
            .unwrap_or_default(),
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

fn json_rejected(body: &[u8]) -> Option<(i64, String)> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let partial = value.get("partialSuccess")?;
    let rejected = match partial.get("rejectedSpans")? {
        serde_json::Value::String(text) => text.parse().ok()?,
        other => other.as_i64()?,
    };
    let message = partial
        .get("errorMessage")
        .and_then(|m| m.as_str())
        .map(|m| shorten(m, 200))
        .unwrap_or_default();
    (rejected > 0 || !message.is_empty()).then_some((rejected, message))
}

/// `google.rpc.Status` (field 2: message), as OTLP receivers send on errors.
#[derive(Clone, PartialEq, Message)]
struct RpcStatus {
    #[prost(string, tag = "2")]
    message: String,
}

fn error_message(body: &[u8]) -> String {
    let text = match std::str::from_utf8(body) {
        Ok(text) => text.trim().to_string(),
        Err(_) => RpcStatus::decode(body)
            .map(|s| s.message)
            .unwrap_or_default(),
    };
    if text.is_empty() {
        return String::new();
    }
    // A receiver's error page (HTML, a stack trace) goes into one log line: on one line, cut.
    format!(": {}", shorten(&text, 200))
}

fn describe(error: &hyper_util::client::legacy::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

/// `base` ± a quarter, so many tracers do not retry in step.
fn jitter(base: Duration) -> Duration {
    use rand::Rng;
    let factor = rand::rng().random_range(0.75..1.25);
    base.mul_f64(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_retryable_statuses_are_retried() {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static("3"),
        );
        for code in [429, 502, 503, 504] {
            let status = http::StatusCode::from_u16(code).unwrap();
            assert_eq!(
                judge(status, &headers, b"", Encoding::Protobuf),
                Attempt::Retry {
                    after: Some(Duration::from_secs(3)),
                    reason: format!("{status} from the receiver"),
                }
            );
        }
        for code in [400, 401, 404, 413, 415, 500] {
            let status = http::StatusCode::from_u16(code).unwrap();
            assert!(matches!(
                judge(status, &headers, b"bad", Encoding::Protobuf),
                Attempt::Refused { .. }
            ));
        }
        let ok = judge(
            http::StatusCode::OK,
            &headers,
            br#"{"partialSuccess":{"rejectedSpans":"2","errorMessage":"old"}}"#,
            Encoding::Json,
        );
        assert_eq!(
            ok,
            Attempt::Delivered {
                rejected: Some((2, "old".into()))
            }
        );
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date() {
        assert_eq!(retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(retry_after("99999"), Some(MAX_RETRY_AFTER));
        let soon = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        assert!(retry_after(&soon).unwrap() > Duration::from_secs(25));
        assert_eq!(retry_after("soon"), None);
    }
}
