//! One message of a trace as a hop-log entry: its words, its timings and the bytes it carried.

use super::{Body, ChunkEntry, CostEntry, HeaderEntry, MessageEntry, Timings, TokenEntry};
use crate::trace::{Direction, RecordedHop};

pub(super) fn message_entry(
    message: &crate::trace::ExplainedMessage,
    hop: &RecordedHop,
) -> MessageEntry {
    let end = hop.end.clone().unwrap_or_default();
    let (timings, headers, body, status) = match message.direction {
        Direction::Request => (
            Timings {
                started_unix_ns: Some(hop.start.started_unix_ns),
                ended_unix_ns: end.request_ended_unix_ns,
                ..Timings::default()
            },
            &hop.start.request_headers,
            &end.request_body,
            None,
        ),
        Direction::Response => (
            Timings {
                head_unix_ns: end.response_head_unix_ns,
                first_byte_unix_ns: end.response_first_byte_unix_ns,
                ended_unix_ns: end.response_ended_unix_ns,
                duration_ns: end
                    .response_ended_unix_ns
                    .map(|at| at - hop.start.started_unix_ns),
                chunks: Some(
                    end.chunks
                        .iter()
                        .map(|c| ChunkEntry {
                            offset_ns: c.offset_ns,
                            size: c.size,
                        })
                        .collect(),
                ),
                chunks_truncated: Some(end.chunks_truncated),
                ..Timings::default()
            },
            &end.response_headers,
            &end.response_body,
            end.status,
        ),
    };
    MessageEntry {
        number: message.number,
        direction: message.direction.arrow().to_string(),
        hop: message.hop_number,
        hop_id: message.hop_id.clone(),
        from: message.from.to_string(),
        to: message.to.to_string(),
        at_unix_ns: message.at_unix_ns,
        method: hop.start.method.clone(),
        path: hop.start.path.clone(),
        status,
        dialect: message.dialect.to_string(),
        case: message.case.name().to_string(),
        summary: message.summary.clone(),
        explanation: message.explanation.clone(),
        tokens: message.tokens.as_ref().and_then(TokenEntry::of),
        cost: message.cost.as_ref().map(CostEntry::of_call),
        timings,
        headers: headers.iter().map(HeaderEntry::encode).collect(),
        body: Body::encode(body),
        part: None,
        unsent: false,
    }
    .into_part(message.part)
}
