//! The record of a WebSocket connection's messages (RFC 6455): each one with its direction,
//! time, opcode and sizes, and the first bytes of its payload (unmasked, inflated).

/// The method a Responses turn read from a WebSocket's messages is shown under (it was a
/// WebSocket message, not a POST); such a turn is never stored, only read from the messages.
pub const TURN_METHOD: &str = "WS";

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WsDirection {
    /// From the client, forwarded upstream.
    ToUpstream,
    /// From the upstream, forwarded to the client.
    ToClient,
}

impl WsDirection {
    /// As stored (`ws_frames.direction`) and journaled.
    pub fn as_str(self) -> &'static str {
        match self {
            WsDirection::ToUpstream => "send",
            WsDirection::ToClient => "receive",
        }
    }

    pub fn parse(text: &str) -> Option<WsDirection> {
        match text {
            "send" => Some(WsDirection::ToUpstream),
            "receive" => Some(WsDirection::ToClient),
            _ => None,
        }
    }
}

/// A frame opcode (RFC 6455 section 5.2); a message is named by its first frame's opcode.
pub mod opcode {
    pub const CONTINUATION: u8 = 0;
    pub const TEXT: u8 = 1;
    pub const BINARY: u8 = 2;
    pub const CLOSE: u8 = 8;
    pub const PING: u8 = 9;
    pub const PONG: u8 = 10;

    /// The opcode's name as the RFC says it.
    pub fn name(code: u8) -> &'static str {
        match code {
            CONTINUATION => "continuation",
            TEXT => "text",
            BINARY => "binary",
            CLOSE => "close",
            PING => "ping",
            PONG => "pong",
            _ => "reserved",
        }
    }
}

/// One message: a data message joined from its fragments, or one control frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsMessage {
    pub direction: WsDirection,
    /// When its last frame had arrived whole.
    pub at_unix_ns: i64,
    pub opcode: u8,
    /// Payload bytes, unmasked and (with `permessage-deflate`) inflated.
    pub size: u64,
    /// Bytes it took on the wire, frame headers included.
    pub wire_size: u64,
    /// Frames it was sent in (1 unless fragmented).
    pub frames: u32,
    /// Sent compressed (RSV1, `permessage-deflate`).
    pub compressed: bool,
    /// Its last frame arrived (false when the connection ended inside it).
    pub complete: bool,
    /// The first bytes of the payload (all of it unless the per-direction budget ran out).
    pub data: Vec<u8>,
    /// Why the payload could not be read whole, if it could not (an inflate error).
    pub error: Option<String>,
}

impl WsMessage {
    /// Fewer bytes were kept than the message held.
    pub fn truncated(&self) -> bool {
        (self.data.len() as u64) < self.size
    }

    /// A close frame's status code and reason, when it carries them.
    pub fn close_status(&self) -> Option<(u16, String)> {
        if self.opcode != opcode::CLOSE || self.data.len() < 2 {
            return None;
        }
        let code = u16::from_be_bytes([self.data[0], self.data[1]]);
        Some((code, String::from_utf8_lossy(&self.data[2..]).into_owned()))
    }
}

/// What a WebSocket hop recorded of its messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WsRecord {
    /// In arrival order (both directions interleaved).
    pub messages: Vec<WsMessage>,
    /// Messages beyond the listed bound, counted but not listed.
    pub not_listed: u64,
    /// The extensions the handshake agreed (`Sec-WebSocket-Extensions` of the 101).
    pub extensions: String,
}
