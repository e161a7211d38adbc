//! The one mapping between the hop record (`hop.rs`) and the columns of `hops`: how a row is
//! read back, which columns a hop's end writes (and the rule that keeps a stored request body),
//! and how headers, chunks and trailers are kept as JSON.

use base64::Engine;

use super::{Result, StoreError};
use tracer_wire::hop::{BodyCapture, Chunk, Header, HopEnd, HopStart, HopState, Role, Transport};

/// Headers as stored: a JSON array of `{"name", "value"}`, or `{"name", "value_base64"}` when the
/// value is not UTF-8, in wire order.
pub(crate) fn headers_to_json(headers: &[Header]) -> String {
    /// One header as the column keeps it: its text, or its bytes in base64 when not UTF-8.
    #[derive(serde::Serialize)]
    struct Stored<'a> {
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        value_base64: Option<String>,
    }
    let items: Vec<Stored<'_>> = headers
        .iter()
        .map(|h| match h.text() {
            Some(text) => Stored {
                name: &h.name,
                value: Some(text),
                value_base64: None,
            },
            None => Stored {
                name: &h.name,
                value: None,
                value_base64: Some(base64::engine::general_purpose::STANDARD.encode(&h.value)),
            },
        })
        .collect();
    // Plain strings always serialize.
    serde_json::to_string(&items).unwrap_or_else(|_| "[]".to_string())
}

pub(crate) fn headers_from_json(text: &str) -> Result<Vec<Header>> {
    /// One header as the column keeps it (the value borrowed when it has no escapes).
    #[derive(serde::Deserialize)]
    struct Stored<'a> {
        #[serde(borrow)]
        name: std::borrow::Cow<'a, str>,
        #[serde(borrow, default)]
        value: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        value_base64: Option<std::borrow::Cow<'a, str>>,
    }
    let bad = |why: &str| StoreError::Malformed(format!("headers column: {why}"));
    let items: Vec<Stored<'_>> = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
    items
        .into_iter()
        .map(|item| {
            let value = match (item.value, item.value_base64) {
                (Some(text), _) => text.into_owned().into_bytes(),
                (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                    .decode(b64.as_bytes())
                    .map_err(|e| bad(&e.to_string()))?,
                (None, None) => return Err(bad("missing value")),
            };
            Ok(Header::new(item.name.into_owned(), value))
        })
        .collect()
}

/// One row of `hops`, as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HopRow {
    pub seq: i64,
    pub id: String,
    pub trace_id: Option<String>,
    pub route: String,
    pub role: String,
    pub transport: String,
    pub peer: String,
    pub method: String,
    pub path: String,
    pub url: String,
    pub state: String,
    pub status: Option<i64>,
    pub error: Option<String>,
    pub request_headers: String,
    pub response_headers: Option<String>,
    pub request_body: Option<Vec<u8>>,
    pub request_body_len: Option<i64>,
    pub request_body_truncated: Option<bool>,
    pub response_body: Option<Vec<u8>>,
    pub response_body_len: Option<i64>,
    pub response_body_truncated: Option<bool>,
    pub request_started_unix_ns: i64,
    pub request_ended_unix_ns: Option<i64>,
    pub response_head_unix_ns: Option<i64>,
    pub response_first_byte_unix_ns: Option<i64>,
    pub response_ended_unix_ns: Option<i64>,
    pub response_chunks: Option<String>,
    pub response_chunks_truncated: Option<bool>,
    pub response_trailers: Option<String>,
    pub note: Option<String>,
    /// Which bodies have pieces in `hop_body_pieces` (bit 1 request, bit 2 response): the row's
    /// body columns then hold only what follows the pieces.
    pub body_pieces: i64,
    /// Which bodies' tails are chunks in `hop_body_chunks` (bit 1 request, bit 2 response): the
    /// row's body column then holds the empty blob. 0 in rows written before chunks.
    #[sqlx(default)]
    pub body_chunked: i64,
    /// A WebSocket hop's `{"extensions", "not_listed"}`; its messages are in `ws_frames`.
    #[sqlx(default)]
    pub websocket: Option<String>,
    /// The `tracer run` that recorded it; None outside a run and in rows written before runs.
    #[sqlx(default)]
    pub run_id: Option<String>,
}

/// A hop read back: the start, the end (when it ended), and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredHop {
    pub seq: i64,
    pub trace_id: Option<String>,
    pub state: HopState,
    pub start: HopStart,
    pub end: HopEnd,
}

impl TryFrom<HopRow> for StoredHop {
    type Error = StoreError;

    fn try_from(row: HopRow) -> Result<Self> {
        let malformed = StoreError::Malformed;
        let state: HopState = row.state.parse().map_err(malformed)?;
        let chunks: Vec<[i64; 2]> = match &row.response_chunks {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| StoreError::Malformed(format!("response_chunks: {e}")))?,
            None => Vec::new(),
        };
        let body = |bytes: Option<Vec<u8>>, len: Option<i64>, truncated: Option<bool>| {
            let bytes = bytes.unwrap_or_default();
            BodyCapture {
                total_len: len.map_or(bytes.len() as u64, |l| u64::try_from(l).unwrap_or(0)),
                bytes,
                truncated: truncated.unwrap_or(false),
            }
        };
        let start = HopStart {
            id: row.id.clone(),
            route: row.route,
            role: row.role.parse::<Role>().map_err(malformed)?,
            transport: row.transport.parse::<Transport>().map_err(malformed)?,
            peer: row.peer,
            method: row.method,
            path: row.path,
            url: row.url,
            request_headers: headers_from_json(&row.request_headers)?,
            started_unix_ns: row.request_started_unix_ns,
            run_id: row.run_id.clone(),
        };
        let end = HopEnd {
            id: row.id,
            state: Some(state),
            status: row.status.and_then(|s| u16::try_from(s).ok()),
            response_headers: match &row.response_headers {
                Some(text) => headers_from_json(text)?,
                None => Vec::new(),
            },
            response_trailers: match &row.response_trailers {
                Some(text) => headers_from_json(text)?,
                None => Vec::new(),
            },
            request_body: body(
                row.request_body,
                row.request_body_len,
                row.request_body_truncated,
            ),
            response_body: body(
                row.response_body,
                row.response_body_len,
                row.response_body_truncated,
            ),
            request_ended_unix_ns: row.request_ended_unix_ns,
            response_head_unix_ns: row.response_head_unix_ns,
            response_first_byte_unix_ns: row.response_first_byte_unix_ns,
            response_ended_unix_ns: row.response_ended_unix_ns,
            chunks: chunks
                .into_iter()
                .map(|[offset_ns, size]| Chunk {
                    offset_ns,
                    size: u64::try_from(size).unwrap_or(0),
                })
                .collect(),
            chunks_truncated: row.response_chunks_truncated.unwrap_or(false),
            error: row.error,
            note: row.note,
            // Read from `ws_frames` by `ws_frames::attach`.
            websocket: None,
        };
        Ok(StoredHop {
            seq: row.seq,
            trace_id: row.trace_id,
            state,
            start,
            end,
        })
    }
}

/// The columns a hop's end writes, from the end alone (the bodies' bytes travel apart, so the
/// writer can move them instead of copying).
pub(crate) struct EndColumns<'a> {
    pub state: &'static str,
    pub status: Option<i64>,
    pub error: Option<&'a str>,
    pub note: Option<&'a str>,
    pub response_headers: String,
    /// False when the end knows nothing of the request (it never finished: no end time, no
    /// bytes): the request columns then keep what a `RequestDone` already stored.
    pub carries_request: bool,
    pub request_body_len: i64,
    pub request_body_truncated: bool,
    pub response_body_len: i64,
    pub response_body_truncated: bool,
    pub request_ended_unix_ns: Option<i64>,
    pub response_head_unix_ns: Option<i64>,
    pub response_first_byte_unix_ns: Option<i64>,
    pub response_ended_unix_ns: Option<i64>,
    pub response_chunks: String,
    pub response_chunks_truncated: bool,
    pub response_trailers: Option<String>,
}

impl<'a> EndColumns<'a> {
    pub(crate) fn of(end: &'a HopEnd) -> EndColumns<'a> {
        EndColumns {
            state: end.state.unwrap_or(HopState::Complete).as_str(),
            status: end.status.map(i64::from),
            error: end.error.as_deref(),
            note: end.note.as_deref(),
            response_headers: headers_to_json(&end.response_headers),
            carries_request: carries_request(end),
            request_body_len: len_i64(end.request_body.total_len),
            request_body_truncated: end.request_body.truncated,
            response_body_len: len_i64(end.response_body.total_len),
            response_body_truncated: end.response_body.truncated,
            request_ended_unix_ns: end.request_ended_unix_ns,
            response_head_unix_ns: end.response_head_unix_ns,
            response_first_byte_unix_ns: end.response_first_byte_unix_ns,
            response_ended_unix_ns: end.response_ended_unix_ns,
            response_chunks: chunks_json(end),
            response_chunks_truncated: end.chunks_truncated,
            response_trailers: trailers_json(end),
        }
    }
}

/// Response trailers as stored: null when the response had none.
fn trailers_json(end: &HopEnd) -> Option<String> {
    (!end.response_trailers.is_empty()).then(|| headers_to_json(&end.response_trailers))
}

/// Response chunk timing as stored: a JSON array of `[offset_ns, size]`.
fn chunks_json(end: &HopEnd) -> String {
    let pairs: Vec<[i64; 2]> = end
        .chunks
        .iter()
        .map(|c| [c.offset_ns, len_i64(c.size)])
        .collect();
    serde_json::to_string(&pairs).unwrap_or_else(|_| "[]".into())
}

/// A length as SQLite's integer.
pub(crate) fn len_i64(len: u64) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

/// A body's stored length.
pub(crate) fn body_len(body: &BodyCapture) -> i64 {
    len_i64(body.total_len)
}

/// Whether an end saw the request (its end time or bytes): then it carries the request body.
pub(crate) fn carries_request(end: &HopEnd) -> bool {
    end.request_ended_unix_ns.is_some() || end.request_body.total_len > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_keep_their_column_format_and_come_back_whole() {
        let headers = vec![
            Header::new("content-type", "application/json"),
            Header::new("x-quote", "say \"hi\"\\ é"),
            Header::new("x-bytes", vec![0xff, 0x00, 0x41]),
        ];
        let text = headers_to_json(&headers);
        assert_eq!(
            text,
            r#"[{"name":"content-type","value":"application/json"},{"name":"x-quote","value":"say \"hi\"\\ é"},{"name":"x-bytes","value_base64":"/wBB"}]"#
        );
        assert_eq!(headers_from_json(&text).unwrap(), headers);
        assert_eq!(headers_to_json(&[]), "[]");
        assert!(headers_from_json(r#"[{"name":"a"}]"#).is_err());
        assert!(headers_from_json("{").is_err());
    }
}
