//! Sending a request to an agent or a model with a fresh `traceparent`, and waiting until the
//! proxy has recorded and grouped the trace it caused (judging is from the wire, not the answer).

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::replay::source::{self, SourceError};
use tracer_live::load::LoadedTrace;
use tracer_reference::agent::upstream_error::error_chain;
use tracer_store::Store;
use tracer_wire::hop::{HopState, Role};
use tracer_wire::trace_context::TraceParent;

/// The most of an answer body kept.
pub const MAX_ANSWER: usize = 32 * 1024 * 1024;
/// How long to wait, after the answer, for the proxy to have recorded and grouped the trace.
pub const RECORD_WAIT: Duration = Duration::from_secs(30);
/// A trace not even begun this long after the answer is not coming (the agent hop is recorded
/// from the moment its request arrives, so its trace exists well before the answer).
const APPEAR_WAIT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(100);

/// An HTTP answer.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Bytes,
}

#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("{url} is not an http:// URL: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("{url}: {message}")]
    Failed { url: String, message: String },
    #[error("{url}: no answer within {seconds} s")]
    TimedOut { url: String, seconds: u64 },
}

/// `base` (a base URL, its own path ignored when `path` is given) joined with `path`.
pub fn join_url(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    let after_scheme = base.split_once("://").map_or(base, |(_, rest)| rest);
    match after_scheme.find('/') {
        Some(cut) => format!("{}{path}", &base[..base.len() - after_scheme.len() + cut]),
        None => format!("{base}{path}"),
    }
}

fn parse(url: &str) -> Result<Uri, SendError> {
    let bad = |reason: &str| SendError::BadUrl {
        url: url.to_string(),
        reason: reason.to_string(),
    };
    let uri: Uri = url
        .parse()
        .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
    if uri.scheme_str() != Some("http") {
        return Err(bad("only plain http:// is supported here"));
    }
    if uri.authority().is_none() {
        return Err(bad("it has no host"));
    }
    Ok(uri)
}

/// POSTs `body` as JSON with `traceparent`, waiting at most `timeout` for the whole answer.
pub async fn post_json(
    url: &str,
    body: Vec<u8>,
    traceparent: Option<&TraceParent>,
    timeout: Duration,
) -> Result<Answer, SendError> {
    let uri = parse(url)?;
    let failed = |message: String| SendError::Failed {
        url: url.to_string(),
        message,
    };
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header("content-type", "application/json")
        .header("user-agent", concat!("tracer/", env!("CARGO_PKG_VERSION")));
    if let Some(parent) = traceparent {
        request = request.header("traceparent", parent.to_string());
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| failed(e.to_string()))?;
    let exchange = async {
        let response = client
            .request(request)
            .await
            .map_err(|e| failed(error_chain(&e)))?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = Limited::new(response.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(|e| failed(format!("reading the answer: {e}")))?
            .to_bytes();
        Ok(Answer {
            status,
            content_type,
            body,
        })
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| SendError::TimedOut {
            url: url.to_string(),
            seconds: timeout.as_secs(),
        })?
}

/// Waits until trace `id` is stored with its agent hop ended, no hop in flight, and every hop that
/// started before the agent answered already grouped (so no late step is missed).
pub async fn wait_for_trace(
    store: &Store,
    id: &str,
    wait: Duration,
) -> Result<Option<LoadedTrace>, SourceError> {
    let mut seen = false;
    let started = tokio::time::Instant::now();
    let deadline = started + wait;
    loop {
        if store.has_trace(id).await? {
            seen = true;
            let trace = source::from_store(store, id).await?;
            if let Some(answered) = answered_at(&trace) {
                let ungrouped = store.earliest_unassigned_start().await?;
                if ungrouped.is_none_or(|start| start > answered) {
                    return Ok(Some(trace));
                }
            }
        }
        let now = tokio::time::Instant::now();
        if now >= deadline || (!seen && now >= started + APPEAR_WAIT.min(wait)) {
            return Ok(None);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// When the agent hop ended, once it and every other hop of the trace have ended.
fn answered_at(trace: &LoadedTrace) -> Option<i64> {
    let ended = |hop: &tracer_trace::RecordedHop| {
        hop.end
            .as_ref()
            .is_some_and(|e| e.state.is_some_and(|s| s != HopState::InFlight))
    };
    if !trace.hops.iter().all(ended) {
        return None;
    }
    trace
        .hops
        .iter()
        .find(|hop| hop.start.role == Role::Agent)
        .and_then(|hop| hop.times().response_ns)
}

#[cfg(test)]
mod tests {
    use super::join_url;

    #[test]
    fn paths_replace_the_base_path() {
        assert_eq!(join_url("http://h:1", "/agent"), "http://h:1/agent");
        assert_eq!(join_url("http://h:1/", "/agent"), "http://h:1/agent");
        assert_eq!(
            join_url("http://h:1/v1", "/v1/chat/completions"),
            "http://h:1/v1/chat/completions"
        );
    }
}
