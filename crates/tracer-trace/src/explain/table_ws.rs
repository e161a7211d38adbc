//! The words for a WebSocket: the upgrade, the messages that crossed it, and the Responses API's
//! turns over it (Codex's `response.create` frames).

use super::table::row;
use super::{Case, CaseText};

pub(crate) const WEBSOCKET: &[CaseText] = &[
    row(
        Case::WebSocketOpen,
        "websocket_open",
        "asks to switch to a WebSocket{extensions}",
        "An HTTP/1.1 request with `Upgrade: websocket`: if the server answers 101, the connection \
         stops being HTTP and carries WebSocket messages both ways (RFC 6455). tracer relays the \
         frames as they come and records each message: its direction, time, opcode and size.",
    ),
    row(
        Case::WebSocketClosed,
        "websocket_closed",
        "WebSocket: {sent} sent, {received} received{turns}{close}",
        "The WebSocket is over. Its messages are listed under it, unmasked and inflated; a binary message is shown by its size only.{turn_words}",
    ),
    row(
        Case::NoteWsPrewarm,
        "note_ws_prewarm",
        "",
        "This `response.create` says `generate: false`: a prewarm. The server loads the \
         instructions and tools and answers with an empty response, so the real turn that follows \
         starts faster; no model output is asked for.",
    ),
    row(
        Case::NoteWsPrevious,
        "note_ws_previous",
        "",
        "Over the WebSocket the client sends only the new items ({items} here); the server keeps \
         the rest of the conversation under `previous_response_id` {previous}.",
    ),
];
