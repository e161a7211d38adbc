//! What an upgraded tunnel keeps of each direction: for a WebSocket, its messages read as they
//! pass (`wire::websocket`, bounded by `--max-body` per direction); for another protocol, the
//! first `--max-body` bytes. The bytes relayed are never changed.

use crate::hop::{BodyCapture, WsDirection, WsRecord};
use crate::wire::websocket::{DeflateTerms, FrameReader};

/// One direction's copy.
pub enum Seen {
    Bytes(BodyCapture),
    Frames {
        reader: Box<FrameReader>,
        total_len: u64,
    },
}

impl Seen {
    /// What the tunnel keeps of `direction` for `protocol` (the `Upgrade` token agreed) and the
    /// agreed `extensions`.
    pub fn for_protocol(
        protocol: &str,
        extensions: &str,
        direction: WsDirection,
        max_body: usize,
    ) -> Seen {
        if protocol.trim().eq_ignore_ascii_case("websocket") {
            let terms = DeflateTerms::negotiated(extensions);
            Seen::Frames {
                reader: Box::new(FrameReader::new(direction, terms, max_body)),
                total_len: 0,
            }
        } else {
            Seen::Bytes(BodyCapture::default())
        }
    }

    /// Takes a copy of bytes that crossed at `now_unix_ns`.
    pub fn observe(&mut self, bytes: &[u8], max_body: usize, now_unix_ns: i64) {
        match self {
            Seen::Bytes(seen) => {
                seen.total_len += bytes.len() as u64;
                let keep = max_body.saturating_sub(seen.bytes.len()).min(bytes.len());
                seen.bytes.extend_from_slice(&bytes[..keep]);
                seen.truncated |= keep < bytes.len();
            }
            Seen::Frames { reader, total_len } => {
                *total_len += bytes.len() as u64;
                reader.feed(bytes, now_unix_ns);
            }
        }
    }
}

/// The hop's bodies and messages from both directions' copies. A WebSocket's bodies keep only
/// their byte counts (the frames as sent are masked and compressed: the messages say it all).
pub fn settle(
    to_upstream: Seen,
    to_client: Seen,
    extensions: &str,
    now_unix_ns: i64,
) -> (BodyCapture, BodyCapture, Option<WsRecord>) {
    let mut record: Option<WsRecord> = None;
    let mut body = |seen: Seen| match seen {
        Seen::Bytes(capture) => capture,
        Seen::Frames { reader, total_len } => {
            let (messages, not_listed) = reader.finish(now_unix_ns);
            let record = record.get_or_insert_with(|| WsRecord {
                extensions: extensions.to_string(),
                ..WsRecord::default()
            });
            record.messages.extend(messages);
            record.not_listed += not_listed;
            BodyCapture {
                bytes: Vec::new(),
                total_len,
                truncated: total_len > 0,
            }
        }
    };
    let request = body(to_upstream);
    let response = body(to_client);
    if let Some(record) = record.as_mut() {
        // Both directions in arrival order (a stable sort keeps each direction's own order).
        record.messages.sort_by_key(|m| m.at_unix_ns);
    }
    (request, response, record)
}
