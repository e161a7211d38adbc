//! One message of a trace as a hop-log entry: its words, its timings and the bytes it carried.

use serde::{Deserialize, Serialize};

use super::{Body, CostEntry, HeaderEntry, MessageEntry, TokenEntry};
use tracer_trace::{Direction, RecordedHop};

/// Whether a log's entries carry the bodies or only their lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bodies {
    /// Every body encoded into its entry: the hop-log document.
    Kept,
    /// Each entry's body empty but for its length and whether it was cut: for the faces that
    /// read the hops themselves (`show`, the exports other than json), so no body is copied.
    LengthsOnly,
}

pub(super) fn message_entry(
    message: &tracer_trace::ExplainedMessage,
    hop: &RecordedHop,
    bodies: Bodies,
) -> MessageEntry {
    let no_end = tracer_wire::hop::HopEnd::default();
    let end = hop.end.as_ref().unwrap_or(&no_end);
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
        context: None,
        timings,
        headers: headers.iter().map(HeaderEntry::encode).collect(),
        body: match bodies {
            Bodies::Kept => Body::encode(body),
            Bodies::LengthsOnly => Body::encode(&tracer_wire::hop::BodyCapture {
                bytes: Vec::new(),
                total_len: body.total_len,
                truncated: body.truncated,
            }),
        },
        part: None,
        unsent: false,
    }
    .into_part(message.part)
}

/// When things happened. Requests carry `started_unix_ns` and `ended_unix_ns`; responses carry
/// the head, first byte and end, the duration since the request started, and every chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) started_unix_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) head_unix_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) first_byte_unix_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ended_unix_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<i64>,
    /// Response chunks: arrival in ns after the request started, and size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chunks: Option<Vec<ChunkEntry>>,
    /// More chunks arrived than were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chunks_truncated: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkEntry {
    pub(crate) offset_ns: i64,
    pub(crate) size: u64,
}
