//! Shared by the dialect tests: fixture loading and a finished hop built around two bodies.
#![allow(dead_code)]

use tracer_trace::RecordedHop;
use tracer_wire::dialect::{Integrity, ModelResponse, Reading};
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

#[macro_export]
macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("../fixtures/dialects/", $name)).as_slice()
    };
}

pub fn headers(pairs: &[(&str, &str)]) -> Vec<Header> {
    pairs.iter().map(|(n, v)| Header::new(*n, *v)).collect()
}

/// A finished hop with the given bodies; the response content type decides its framing.
pub fn hop(
    role: Role,
    path: &str,
    request: &[u8],
    content_type: &str,
    response: &[u8],
) -> RecordedHop {
    hop_with(role, path, &[], request, content_type, response)
}

pub fn hop_with(
    role: Role,
    path: &str,
    request_headers: &[(&str, &str)],
    request: &[u8],
    content_type: &str,
    response: &[u8],
) -> RecordedHop {
    RecordedHop {
        read: Default::default(),
        start: HopStart {
            id: "00000000000000000000000000000001".into(),
            route: role.as_str().into(),
            role,
            transport: Transport::Http,
            peer: "127.0.0.1:50000".into(),
            method: "POST".into(),
            path: path.into(),
            url: format!("http://127.0.0.1:1{path}"),
            request_headers: headers(request_headers),
            started_unix_ns: 1_000_000_000,
            run_id: None,
        },
        end: Some(HopEnd {
            id: "00000000000000000000000000000001".into(),
            state: Some(HopState::Complete),
            status: Some(200),
            response_headers: headers(&[("content-type", content_type)]),
            request_body: BodyCapture::whole(request.to_vec()),
            response_body: BodyCapture::whole(response.to_vec()),
            response_first_byte_unix_ns: Some(1_100_000_000),
            response_ended_unix_ns: Some(1_500_000_000),
            ..HopEnd::default()
        }),
    }
}

pub fn reply_of(hop: &RecordedHop) -> (ModelResponse, Integrity) {
    let response = hop.reading().response.expect("a response");
    match response.reading {
        Reading::ModelResponse(reply) => {
            (std::sync::Arc::unwrap_or_clone(reply), response.integrity)
        }
        other => panic!("not a chat response: {other:?}"),
    }
}

pub const NDJSON: &str = "application/x-ndjson";
pub const SSE: &str = "text/event-stream";
pub const JSON: &str = "application/json";
