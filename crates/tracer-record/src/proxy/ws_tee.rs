//! What an upgraded tunnel keeps of each direction: for a WebSocket, its messages read as they
//! pass (`tracer_wire::websocket`, bounded by `--max-body` per direction) and handed to the store as
//! they complete, so an open socket's turns can be read before it closes; for another protocol,
//! the first `--max-body` bytes. The bytes relayed are never changed.

use std::sync::atomic::{AtomicU64, Ordering};

use tracer_wire::hop::{BodyCapture, Sink, WsBatch, WsDirection, WsMessage, WsRecord};
use tracer_wire::websocket::{DeflateTerms, FrameReader};

/// Where an open socket's messages go as they complete: the hop's id, the next message's
/// number and the counts so far (shared by both directions).
pub(crate) struct LiveMessages {
    sink: Sink,
    id: String,
    extensions: String,
    next_seq: AtomicU64,
    not_listed: [AtomicU64; 2],
}

impl LiveMessages {
    pub(crate) fn new(sink: Sink, id: String, extensions: String) -> Self {
        Self {
            sink,
            id,
            extensions,
            next_seq: AtomicU64::new(0),
            not_listed: [AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    fn not_listed_total(&self) -> u64 {
        self.not_listed
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .sum()
    }

    /// Hands `messages` over (emptied when the store took them; kept for the next try if not).
    fn send(&self, messages: &mut Vec<WsMessage>) {
        if messages.is_empty() {
            return;
        }
        let count = messages.len() as u64;
        let first_seq = self.next_seq.load(Ordering::Relaxed);
        let batch = WsBatch {
            id: self.id.clone(),
            first_seq,
            record: WsRecord {
                messages: std::mem::take(messages),
                not_listed: self.not_listed_total(),
                extensions: self.extensions.clone(),
            },
        };
        let kept = self.sink.ws_messages(batch.clone());
        if kept {
            self.next_seq.store(first_seq + count, Ordering::Relaxed);
        } else {
            *messages = batch.record.messages;
        }
    }
}

/// One direction's copy.
pub(crate) enum Seen {
    Bytes(BodyCapture),
    Frames {
        reader: Box<FrameReader>,
        total_len: u64,
        /// Completed messages the store has not taken yet.
        pending: Vec<WsMessage>,
    },
}

impl Seen {
    /// What the tunnel keeps of `direction` for `protocol` (the `Upgrade` token agreed) and the
    /// agreed `extensions`.
    pub(crate) fn for_protocol(
        protocol: &str,
        extensions: &str,
        direction: WsDirection,
        max_body: usize,
    ) -> Seen {
        if is_websocket(protocol) {
            let terms = DeflateTerms::negotiated(extensions);
            Seen::Frames {
                reader: Box::new(FrameReader::new(direction, terms, max_body)),
                total_len: 0,
                pending: Vec::new(),
            }
        } else {
            Seen::Bytes(BodyCapture::default())
        }
    }

    /// Takes a copy of bytes that crossed at `now_unix_ns`; the messages they completed go to
    /// `live` at once.
    pub(crate) fn observe(
        &mut self,
        bytes: &[u8],
        max_body: usize,
        now_unix_ns: i64,
        live: Option<&LiveMessages>,
    ) {
        match self {
            Seen::Bytes(seen) => {
                seen.total_len += bytes.len() as u64;
                let keep = max_body.saturating_sub(seen.bytes.len()).min(bytes.len());
                seen.bytes.extend_from_slice(&bytes[..keep]);
                seen.truncated |= keep < bytes.len();
            }
            Seen::Frames {
                reader,
                total_len,
                pending,
            } => {
                *total_len += bytes.len() as u64;
                reader.feed(bytes, now_unix_ns);
                if let Some(live) = live {
                    pending.extend(reader.take_done());
                    let slot = usize::from(reader.direction() == WsDirection::ToClient);
                    live.not_listed[slot].store(reader.not_listed(), Ordering::Relaxed);
                    live.send(pending);
                }
            }
        }
    }
}

/// Whether the agreed `Upgrade` token is a WebSocket.
pub(crate) fn is_websocket(protocol: &str) -> bool {
    protocol.trim().eq_ignore_ascii_case("websocket")
}

/// The hop's bodies and messages from both directions' copies. A WebSocket's bodies keep only
/// their byte counts (the frames as sent are masked and compressed: the messages say it all).
/// With `live`, the messages not yet handed over go to it now and the record lists none (they
/// are all in the store); a last batch it could not take is counted as not listed.
pub(crate) fn settle(
    to_upstream: Seen,
    to_client: Seen,
    extensions: &str,
    now_unix_ns: i64,
    live: Option<&LiveMessages>,
) -> (BodyCapture, BodyCapture, Option<WsRecord>) {
    let mut record: Option<WsRecord> = None;
    let mut body = |seen: Seen| match seen {
        Seen::Bytes(capture) => capture,
        Seen::Frames {
            reader,
            total_len,
            pending,
        } => {
            let (messages, not_listed) = reader.finish(now_unix_ns);
            let record = record.get_or_insert_with(|| WsRecord {
                extensions: extensions.to_string(),
                ..WsRecord::default()
            });
            record.messages.extend(pending);
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
        if let Some(live) = live {
            live.send(&mut record.messages);
            record.not_listed += record.messages.len() as u64;
            record.messages.clear();
        }
    }
    (request, response, record)
}
