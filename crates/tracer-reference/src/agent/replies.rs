//! The agent's JSON replies, shared by both fronts (`http` for `POST /agent`, `openai_front`
//! for the OpenAI-compatible routes): bodies read with a cap, errors as JSON naming what failed,
//! and a body fed from a channel for streamed answers.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body::{Body, Frame};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use serde::Serialize;
use tokio::sync::mpsc;

use super::agent_loop::RunError;
use tracer_wire::agent_api::{ErrorBody, ErrorKind};

/// The largest request body the agent reads.
pub(crate) const MAX_REQUEST_BODY: usize = 4 * 1024 * 1024;

pub(crate) type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// Reads a request body up to [`MAX_REQUEST_BODY`]; a bigger or broken one becomes the reply.
pub(crate) async fn read_body(body: Incoming) -> Result<Bytes, HttpResponse> {
    match Limited::new(body, MAX_REQUEST_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorKind::PayloadTooLarge,
            format!("the body is larger than {MAX_REQUEST_BODY} bytes"),
        )),
        Err(e) => Err(bad_request(format!("the body could not be read: {e}"))),
    }
}

pub(crate) fn run_error(error: RunError) -> HttpResponse {
    match error {
        RunError::Upstream(error) => {
            // One log line, whatever the upstream said (an HTML error page, a stack trace).
            let line = tracer_wire::safe_text::log_line(&error.to_string());
            tracing::warn!(error = %line, "upstream failed");
            json(error.status(), &error.body())
        }
        // Only a streaming reply can lose its reader, and nobody is left to read this one.
        RunError::ClientGone => bad_request("the client closed the request".to_string()),
    }
}

pub(crate) fn bad_request(message: String) -> HttpResponse {
    error(StatusCode::BAD_REQUEST, ErrorKind::BadRequest, message)
}

pub(crate) fn error(status: StatusCode, kind: ErrorKind, message: String) -> HttpResponse {
    json(status, &ErrorBody::new(kind, message))
}

pub(crate) fn json(status: StatusCode, value: &impl Serialize) -> HttpResponse {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A response body fed from a channel: each message goes out as one chunk, as it is sent.
pub struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl ChannelBody {
    pub fn new(rx: mpsc::Receiver<Bytes>) -> Self {
        Self { rx }
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
    }
}
