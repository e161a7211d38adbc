//! HTTP's ordinary moves that carry no conversation: Streamable HTTP's `GET` for the server's own
//! stream (a `405` answer means the server offers none, as the protocol allows), `DELETE` to end
//! an MCP session, and a `HEAD` preconnect. Each is told as what it is and is never a failure.

use tracer_wire::hop::{HopStart, HopState, Role, header_text};

/// One of the moves, by its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransportMove {
    /// `GET` on an MCP endpoint (or any `GET` asking for `text/event-stream`): the host asks for
    /// a stream of the server's own messages and keeps it open while it runs.
    ServerStream,
    /// `DELETE` on an MCP endpoint: the host ends its session.
    EndSession,
    /// `HEAD`: the client opens a connection ahead of its first real request.
    Preconnect,
}

impl TransportMove {
    /// The move a request makes, if it is one of these.
    pub(crate) fn of(start: &HopStart) -> Option<TransportMove> {
        match (start.method.as_str(), start.role) {
            ("GET", Role::Mcp) => Some(TransportMove::ServerStream),
            ("GET", _) if asks_for_event_stream(start) => Some(TransportMove::ServerStream),
            ("DELETE", Role::Mcp) => Some(TransportMove::EndSession),
            ("HEAD", _) => Some(TransportMove::Preconnect),
            _ => None,
        }
    }

    /// The answer that is this move's ordinary outcome, whatever its status says; None for any
    /// other answer (a `GET` that opens a stream is read as the stream it is).
    pub(crate) fn ordinary_answer(self, status: u16) -> Option<OrdinaryAnswer> {
        match (self, status) {
            (TransportMove::ServerStream, 405) => Some(OrdinaryAnswer::NoServerStream),
            (TransportMove::EndSession, 200..=299 | 404) => Some(OrdinaryAnswer::SessionEnded),
            (TransportMove::EndSession, 405) => Some(OrdinaryAnswer::SessionEndRefused),
            (TransportMove::Preconnect, 100..=499) => Some(OrdinaryAnswer::PreconnectAnswered),
            _ => None,
        }
    }
}

/// An answer that is a move's ordinary outcome (so not a failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OrdinaryAnswer {
    /// A `405` to a `GET` for the server's stream: the server offers none.
    NoServerStream,
    /// A `2xx` or `404` to a `DELETE`: the session is over.
    SessionEnded,
    /// A `405` to a `DELETE`: the server does not let clients end sessions.
    SessionEndRefused,
    /// Any answer below `500` to a `HEAD` preconnect.
    PreconnectAnswered,
}

fn asks_for_event_stream(start: &HopStart) -> bool {
    header_text(&start.request_headers, "accept")
        .is_some_and(|accept| accept.to_ascii_lowercase().contains("text/event-stream"))
}

/// Whether a hop is a host's standing stream for server messages: it belongs to no request,
/// holds no trace open while it stays open, and its end when the host stops is no failure.
pub(crate) fn is_standing_stream(start: &HopStart) -> bool {
    TransportMove::of(start) == Some(TransportMove::ServerStream)
}

/// Whether a standing stream's end is the host's: it stopped listening (closed the stream, or
/// went away) rather than the stream breaking on the server's side.
pub(crate) fn host_ended_standing_stream(start: &HopStart, state: Option<HopState>) -> bool {
    is_standing_stream(start) && state == Some(HopState::Aborted)
}

/// Whether the client left before this move's answer as a host ending its session does: a
/// `DELETE` is often the last thing a process sends before it exits, without waiting.
pub(crate) fn left_after_ending_session(
    start: &HopStart,
    state: Option<HopState>,
    status: Option<u16>,
) -> bool {
    TransportMove::of(start) == Some(TransportMove::EndSession)
        && state == Some(HopState::Aborted)
        && status.is_none()
}

/// Whether a hop's answer is the ordinary outcome of one of these moves (so not a failure).
pub(crate) fn is_ordinary_answer(start: &HopStart, status: Option<u16>) -> bool {
    match (TransportMove::of(start), status) {
        (Some(step), Some(status)) => step.ordinary_answer(status).is_some(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracer_wire::hop::Transport;

    fn start(method: &str, role: Role) -> HopStart {
        HopStart {
            id: "0".repeat(32),
            route: role.as_str().into(),
            role,
            transport: Transport::Http,
            peer: "127.0.0.1:1".into(),
            method: method.into(),
            path: "/mcp".into(),
            url: "http://127.0.0.1:9/mcp".into(),
            request_headers: Vec::new(),
            started_unix_ns: 0,
            run_id: None,
        }
    }

    #[test]
    fn the_protocols_ordinary_answers_are_not_failures() {
        let get = start("GET", Role::Mcp);
        assert!(is_ordinary_answer(&get, Some(405)));
        assert!(
            !is_ordinary_answer(&get, Some(500)),
            "a real failure stays one"
        );
        assert!(
            !is_ordinary_answer(&get, Some(200)),
            "a stream is read as a stream"
        );
        let delete = start("DELETE", Role::Mcp);
        for status in [200, 202, 204, 404, 405] {
            assert!(is_ordinary_answer(&delete, Some(status)), "{status}");
        }
        assert!(!is_ordinary_answer(&delete, Some(400)));
        let head = start("HEAD", Role::Model);
        assert!(is_ordinary_answer(&head, Some(404)), "a preconnect's 404");
        assert!(!is_ordinary_answer(&head, Some(503)));
        assert!(!is_ordinary_answer(&start("GET", Role::Model), Some(405)));
        assert!(!is_ordinary_answer(&start("POST", Role::Mcp), Some(405)));
        let aborted = Some(HopState::Aborted);
        assert!(left_after_ending_session(&delete, aborted, None));
        assert!(
            !left_after_ending_session(&delete, aborted, Some(500)),
            "an answer came"
        );
        assert!(
            !left_after_ending_session(&get, aborted, None),
            "only a DELETE"
        );
        assert!(!left_after_ending_session(
            &delete,
            Some(HopState::Failed),
            None
        ));
        assert!(host_ended_standing_stream(&get, aborted));
        assert!(!host_ended_standing_stream(&get, Some(HopState::Failed)));
        let mut sse = start("GET", Role::Other);
        assert!(!is_standing_stream(&sse), "a plain GET is a request");
        sse.request_headers = vec![tracer_wire::hop::Header::new("Accept", "text/event-stream")];
        assert!(is_standing_stream(&sse), "any GET held open for events");
    }
}
