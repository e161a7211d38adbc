//! What can go wrong with an upstream (the model server or an MCP server), and how the agent's
//! HTTP front reports it: 502 for unreachable or failing, 504 for timeouts, always naming which
//! upstream and where.

use http::StatusCode;
use thiserror::Error;

use tracer_wire::agent_api::{ErrorBody, ErrorKind, Upstream};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Nothing answered (connection refused, DNS, process would not start).
    Unreachable,
    /// It did not answer within the configured timeout.
    Timeout,
    /// It answered with an error status or a body that could not be read.
    Failed,
}

/// One upstream failure, with enough context for a user to find the broken piece.
#[derive(Debug, Clone, Error)]
#[error("{} {} ({}) {}: {detail}", upstream.role, upstream.name, upstream.address, kind_words(*kind))]
pub struct UpstreamError {
    pub kind: FailureKind,
    pub upstream: Upstream,
    pub detail: String,
}

fn kind_words(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Unreachable => "is unreachable",
        FailureKind::Timeout => "timed out",
        FailureKind::Failed => "failed",
    }
}

impl UpstreamError {
    pub fn new(kind: FailureKind, upstream: &Upstream, detail: impl Into<String>) -> Self {
        Self {
            kind,
            upstream: upstream.clone(),
            detail: detail.into(),
        }
    }

    pub(crate) fn status(&self) -> StatusCode {
        match self.kind {
            FailureKind::Timeout => StatusCode::GATEWAY_TIMEOUT,
            FailureKind::Unreachable | FailureKind::Failed => StatusCode::BAD_GATEWAY,
        }
    }

    pub(crate) fn body(&self) -> ErrorBody {
        let kind = match self.kind {
            FailureKind::Unreachable => ErrorKind::UpstreamUnreachable,
            FailureKind::Timeout => ErrorKind::UpstreamTimeout,
            FailureKind::Failed => ErrorKind::UpstreamError,
        };
        let mut body = ErrorBody::new(kind, self.to_string());
        body.error.upstream = Some(self.upstream.clone());
        body
    }
}

/// The messages of an error and its sources, joined: `client error (Connect): tcp connect
/// error: Connection refused (os error 111)`.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let part = inner.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = inner.source();
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn message_names_the_upstream_and_where() {
        let upstream = Upstream {
            role: "model".into(),
            name: "ollama".into(),
            address: "http://127.0.0.1:9/api/chat".into(),
        };
        let error = UpstreamError::new(FailureKind::Unreachable, &upstream, "connection refused");
        assert_eq!(
            error.to_string(),
            "model ollama (http://127.0.0.1:9/api/chat) is unreachable: connection refused"
        );
        assert_eq!(error.status(), StatusCode::BAD_GATEWAY);
        let timeout = UpstreamError::new(FailureKind::Timeout, &upstream, "no answer in 1s");
        assert_eq!(timeout.status(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(timeout.body().error.kind, ErrorKind::UpstreamTimeout);
    }
}
