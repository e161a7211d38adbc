//! How a forwarded response's body ended, as the hop records it: complete, cut short or left
//! early, with words that say what the client got (the head, how many bytes, how its body
//! ended) and a note when the upstream ended it by closing its connection.

use http::Response;
use http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::body::Incoming;

use super::tee::{BodyOutcome, Captured};
use super::tls_end::RaggedEof;
use tracer_wire::hop::HopState;
use tracer_wire::stream_end::{EndEvent, WENT_AWAY_MID_RESPONSE};

/// What the response head said of how its body ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResponseFraming {
    pub(crate) status: u16,
    /// The head's Content-Length.
    pub(crate) length: Option<u64>,
    /// HTTP/1 with neither a length nor chunked: the body ends when the connection does.
    close_delimited: bool,
    /// Whether the upstream's TLS connection ended without `close_notify`.
    ragged: Option<RaggedEof>,
}

impl ResponseFraming {
    pub(crate) fn of(response: &Response<Incoming>) -> Self {
        let headers = response.headers();
        let length = headers
            .get(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse().ok());
        let chunked = headers.contains_key(TRANSFER_ENCODING);
        let http1 = response.version() <= http::Version::HTTP_11;
        let status = response.status().as_u16();
        let may_have_body = status >= 200 && status != 204 && status != 304;
        ResponseFraming {
            status,
            length,
            close_delimited: http1 && may_have_body && length.is_none() && !chunked,
            ragged: response.extensions().get::<RaggedEof>().cloned(),
        }
    }

    /// A body the client reads to its end without counting bytes: one ended early by the
    /// upstream after its stream's end event can be ended cleanly for the client.
    pub(crate) fn unmeasured(&self) -> bool {
        self.length.is_none()
    }

    fn ragged(&self) -> bool {
        self.ragged.as_ref().is_some_and(RaggedEof::happened)
    }
}

/// The hop's state, error and note from how its response body ended.
pub(crate) struct BodyEnd {
    pub(crate) state: HopState,
    pub(crate) error: Option<String>,
    pub(crate) note: Option<String>,
}

const NO_CLOSE_NOTIFY: &str = "closed the connection without TLS close_notify";

// A cut body's words begin "upstream body failed" or "the upstream closed the connection":
// `trace/failed_hop.rs` reads them so, to tell them from tracer's own answers.

/// How the response body ended, in the hop's words.
pub(crate) fn body_end(framing: &ResponseFraming, seen: &Captured) -> BodyEnd {
    let bytes = seen.body.total_len;
    let status = framing.status;
    let ended = |state, error: Option<String>, note: Option<String>| BodyEnd { state, error, note };
    match &seen.outcome {
        BodyOutcome::Complete => {
            if let Some(cause) = &seen.broke_after_end {
                let event = seen.end_event.map_or("its end event", EndEvent::as_str);
                let note = format!(
                    "the upstream broke off after the stream's end event ({event}): {cause}; \
                     the client's body was ended there, whole"
                );
                return ended(HopState::Complete, None, Some(note));
            }
            if !framing.close_delimited {
                return ended(HopState::Complete, None, None);
            }
            let how = if framing.ragged() {
                NO_CLOSE_NOTIFY
            } else {
                "closed the connection"
            };
            if let Some(inside) = seen.cut_inside {
                let error = format!(
                    "the upstream {how} in the middle of {inside}, after {bytes} bytes: the body \
                     was cut short; the client got the {status} head and those {bytes} bytes, its \
                     body ending there as a body without a length does"
                );
                return ended(HopState::Failed, Some(error), None);
            }
            let note = framing.ragged().then(|| {
                let after = seen.end_event.map_or_else(
                    || format!("after {bytes} bytes"),
                    |event| format!("after the stream's end event ({})", event.as_str()),
                );
                format!(
                    "the upstream {NO_CLOSE_NOTIFY} {after}; a body without a length ends \
                     there, and the client's ended cleanly too"
                )
            });
            ended(HopState::Complete, None, note)
        }
        BodyOutcome::Broken(cause) => {
            let of = framing
                .length
                .map_or_else(String::new, |length| format!(" of {length}"));
            let tls = if framing.ragged() {
                format!(" (the upstream {NO_CLOSE_NOTIFY})")
            } else {
                String::new()
            };
            let error = format!(
                "upstream body failed after {bytes}{of} bytes: {cause}{tls}; the client got the \
                 {status} head and those {bytes} bytes, then tracer cut its answer off there as \
                 the upstream had"
            );
            ended(HopState::Failed, Some(error), None)
        }
        // The stream had passed its end event: the client had the whole answer.
        BodyOutcome::Dropped if seen.end_event.is_some() => ended(
            HopState::Complete,
            None,
            seen.end_event.map(EndEvent::stopped_reading_note),
        ),
        BodyOutcome::Dropped => ended(HopState::Aborted, Some(WENT_AWAY_MID_RESPONSE.into()), None),
    }
}
