//! A WebSocket hop's messages in the hop log (`hops[].websocket`): each message with its
//! direction, time, opcode and sizes, its kept payload as text when it is UTF-8 (else base64),
//! read back exactly.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use tracer_wire::hop::{WsDirection, WsMessage, WsRecord};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WsEntry {
    /// The agreed `Sec-WebSocket-Extensions` (empty when none).
    pub(crate) extensions: String,
    /// Messages beyond the listed bound, counted only.
    pub(crate) not_listed: u64,
    pub(crate) messages: Vec<WsMessageEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WsMessageEntry {
    /// `send` (client to upstream) or `receive`.
    pub(crate) direction: String,
    pub(crate) at_unix_ns: i64,
    pub(crate) opcode: u8,
    pub(crate) size: u64,
    pub(crate) wire_size: u64,
    pub(crate) frames: u32,
    pub(crate) compressed: bool,
    pub(crate) complete: bool,
    /// The kept payload when it is UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    /// The kept payload otherwise, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) base64: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

impl WsEntry {
    pub(crate) fn of(record: &WsRecord) -> WsEntry {
        WsEntry {
            extensions: record.extensions.clone(),
            not_listed: record.not_listed,
            messages: record.messages.iter().map(WsMessageEntry::of).collect(),
        }
    }

    pub(crate) fn decode(&self) -> Result<WsRecord, String> {
        let messages = self
            .messages
            .iter()
            .map(WsMessageEntry::decode)
            .collect::<Result<_, _>>()?;
        Ok(WsRecord {
            messages,
            not_listed: self.not_listed,
            extensions: self.extensions.clone(),
        })
    }
}

impl WsMessageEntry {
    fn of(m: &WsMessage) -> WsMessageEntry {
        let (text, base64) = match std::str::from_utf8(&m.data) {
            Ok(text) => (Some(text.to_string()), None),
            Err(_) => (None, Some(STANDARD.encode(&m.data))),
        };
        WsMessageEntry {
            direction: m.direction.as_str().to_string(),
            at_unix_ns: m.at_unix_ns,
            opcode: m.opcode,
            size: m.size,
            wire_size: m.wire_size,
            frames: m.frames,
            compressed: m.compressed,
            complete: m.complete,
            text,
            base64,
            error: m.error.clone(),
        }
    }

    fn decode(&self) -> Result<WsMessage, String> {
        let direction = WsDirection::parse(&self.direction)
            .ok_or_else(|| format!("WebSocket direction \"{}\"", self.direction))?;
        let data = match (&self.text, &self.base64) {
            (Some(text), None) => text.as_bytes().to_vec(),
            (None, Some(b64)) => STANDARD
                .decode(b64)
                .map_err(|e| format!("WebSocket message base64: {e}"))?,
            (None, None) => Vec::new(),
            (Some(_), Some(_)) => return Err("a WebSocket message with text and base64".into()),
        };
        Ok(WsMessage {
            direction,
            at_unix_ns: self.at_unix_ns,
            opcode: self.opcode,
            size: self.size,
            wire_size: self.wire_size,
            frames: self.frames,
            compressed: self.compressed,
            complete: self.complete,
            data,
            error: self.error.clone(),
        })
    }
}
