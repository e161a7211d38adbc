//! What a WebSocket handshake agreed about `permessage-deflate` (RFC 7692): whether each side
//! starts every message with a fresh window.

use crate::hop::WsDirection;

/// What a handshake's `Sec-WebSocket-Extensions` agreed about `permessage-deflate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateTerms {
    pub client_no_context_takeover: bool,
    pub server_no_context_takeover: bool,
}

impl DeflateTerms {
    /// The terms of the first `permessage-deflate` in an extensions header, if it names one.
    pub fn negotiated(extensions: &str) -> Option<DeflateTerms> {
        let offer = extensions.split(',').find(|offer| {
            offer
                .split(';')
                .next()
                .is_some_and(|name| name.trim().eq_ignore_ascii_case("permessage-deflate"))
        })?;
        let has = |param: &str| {
            offer
                .split(';')
                .any(|p| p.trim().eq_ignore_ascii_case(param))
        };
        Some(DeflateTerms {
            client_no_context_takeover: has("client_no_context_takeover"),
            server_no_context_takeover: has("server_no_context_takeover"),
        })
    }

    /// Whether the sender of `direction` starts every message with a fresh window.
    pub(crate) fn resets(self, direction: WsDirection) -> bool {
        match direction {
            WsDirection::ToUpstream => self.client_no_context_takeover,
            WsDirection::ToClient => self.server_no_context_takeover,
        }
    }
}
