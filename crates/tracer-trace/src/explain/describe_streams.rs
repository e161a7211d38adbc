//! HTTP's ordinary moves told as what they are: a host's standing stream for server messages
//! (`GET /mcp`, any `GET` held open for `text/event-stream`), open while the host runs and closed
//! when it stops; a session's end and a preconnect, and their ordinary answers.

use crate::RecordedHop;
use crate::read::transport_moves::{
    OrdinaryAnswer, TransportMove, host_ended_standing_stream, is_standing_stream,
};
use crate::{explain::Case, explain::Explained, explain::McpCase, words::human_duration};
use tracer_wire::hop::HopState;

/// The words for a standing stream's answer while it is open, or once its host closed it; None
/// for any other hop (and for a stream the server declined or broke: those are told as usual).
pub(crate) fn standing_stream_end(hop: &RecordedHop) -> Option<Explained> {
    if !is_standing_stream(&hop.start) {
        return None;
    }
    let end = hop.end.as_ref();
    let state = end.and_then(|e| e.state);
    let status = end.and_then(|e| e.status);
    if status.is_some_and(|s| s != 200) {
        return None;
    }
    let events = end.map_or(0, |e| e.chunks.len()).to_string();
    match state {
        None | Some(HopState::InFlight) => Some(Explained::new(
            Case::Mcp(McpCase::StandingStreamOpen),
            &[("events", events)],
        )),
        _ if host_ended_standing_stream(&hop.start, state) => {
            let open_for = end
                .and_then(|e| e.response_ended_unix_ns)
                .map(|ended| human_duration(ended - hop.start.started_unix_ns))
                .unwrap_or_else(|| "a while".to_string());
            Some(Explained::new(
                Case::Mcp(McpCase::StandingStreamClosed),
                &[("open_for", open_for)],
            ))
        }
        _ => None,
    }
}

/// The case of a transport move's request.
pub(crate) fn request_case(step: TransportMove) -> Case {
    match step {
        TransportMove::ServerStream => Case::McpServerStream,
        TransportMove::EndSession => Case::McpEndSession,
        TransportMove::Preconnect => Case::Preconnect,
    }
}

/// The case of an answer that is a transport move's ordinary outcome (see
/// [`TransportMove::ordinary_answer`]).
pub(crate) fn ordinary_answer_case(step: TransportMove, status: u16) -> Option<Case> {
    Some(match step.ordinary_answer(status)? {
        OrdinaryAnswer::NoServerStream => Case::McpNoServerStream,
        OrdinaryAnswer::SessionEnded => Case::McpSessionEnded,
        OrdinaryAnswer::SessionEndRefused => Case::McpSessionEndRefused,
        OrdinaryAnswer::PreconnectAnswered => Case::PreconnectAnswered,
    })
}
