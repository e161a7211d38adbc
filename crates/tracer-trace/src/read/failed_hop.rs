//! Whose answer a failed hop's caller had: tracer's own (no response head came from the
//! upstream, so tracer answered 502, 504 or 400 with its JSON error) or the upstream's, whose
//! body stopped before its end (the proxy's words for that say so).

use serde_json::Value;

use crate::RecordedHop;

/// How the proxy's words for a body that stopped before its end begin (`proxy/body_end.rs`;
/// the first is also how rows recorded before it wrote these words begin).
const CUT_BODY: [&str; 2] = ["upstream body failed", "the upstream closed the connection"];

/// True when tracer answered the caller itself: a tunnel it could not open, a response whose
/// body is tracer's JSON error carrying the hop's own error words, or any failure whose words
/// do not say the upstream's body was cut.
pub(crate) fn answered_by_tracer(hop: &RecordedHop) -> bool {
    if hop.start.method == "CONNECT" {
        return true;
    }
    let Some(end) = &hop.end else { return true };
    let Some(error) = end.error.as_deref() else {
        return true;
    };
    let own_answer = serde_json::from_slice::<Value>(&end.response_body.bytes)
        .ok()
        .and_then(|body| {
            body.pointer("/error/message")
                .and_then(Value::as_str)
                .map(|message| message == error)
        })
        .unwrap_or(false);
    own_answer || !CUT_BODY.iter().any(|words| error.starts_with(words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracer_wire::hop::{BodyCapture, HopEnd, HopStart, HopState, Role, Transport};

    fn hop(body: &[u8], error: &str) -> RecordedHop {
        RecordedHop::new(
            HopStart {
                id: "h".into(),
                route: "r".into(),
                role: Role::Model,
                transport: Transport::Http,
                peer: String::new(),
                method: "POST".into(),
                path: "/v1/messages".into(),
                url: String::new(),
                request_headers: Vec::new(),
                started_unix_ns: 0,
                run_id: None,
            },
            Some(HopEnd {
                state: Some(HopState::Failed),
                error: Some(error.into()),
                response_body: BodyCapture::whole(body.to_vec()),
                ..HopEnd::default()
            }),
        )
    }

    #[test]
    fn tracers_own_answer_is_told_from_a_cut_body() {
        let own =
            br#"{"error":{"route":"m","upstream":"u","message":"upstream request failed: x"}}"#;
        assert!(answered_by_tracer(&hop(own, "upstream request failed: x")));
        let cut = b"event: message_start\ndata: {\"type\":\"mess";
        assert!(!answered_by_tracer(&hop(
            cut,
            "upstream body failed after 40 bytes"
        )));
        assert!(!answered_by_tracer(&hop(
            cut,
            "the upstream closed the connection in the middle of an SSE event, after 40 bytes"
        )));
        assert!(answered_by_tracer(&hop(b"", "connection refused")));
    }
}
