//! An MCP hop's outcome read: its reading's MCP messages, a call its requester withdrew, and the
//! outcomes that look like failures but are the protocol working as meant.

use crate::read::RecordedHop;
use tracer_wire::dialect::{Dialect, HopReading, JsonRpcKind, Reading};

/// The MCP messages a reading holds, when it is one.
pub(crate) fn mcp_reading(reading: Option<&Reading>) -> Option<&tracer_wire::dialect::McpReading> {
    match reading {
        Some(Reading::Mcp(mcp)) => Some(mcp),
        _ => None,
    }
}

/// Whether a hop withdrawn by its requester (`notifications/cancelled`) ended here.
pub(crate) fn withdrawn(hop: &RecordedHop) -> bool {
    hop.end
        .as_ref()
        .and_then(|e| e.error.as_deref())
        .is_some_and(|e| e.starts_with("cancelled by the requester"))
}

/// Whether an MCP hop's outcome is the protocol working as meant, though it looks like a
/// failure: `server/discover` refused by a handshake-era server (the host falls back to
/// `initialize`), a call the host withdrew, and -32042 (the user is sent to a URL first).
pub(crate) fn is_ordinary_outcome(hop: &RecordedHop, reading: &HopReading) -> bool {
    if reading.dialect != Dialect::Mcp {
        return false;
    }
    let request = mcp_reading(Some(&reading.request.reading)).and_then(|m| m.request());
    let reply = mcp_reading(reading.response.as_ref().map(|r| &r.reading)).and_then(|m| m.reply());
    let discover_refused = request.is_some_and(|r| r.method.as_deref() == Some("server/discover"))
        && reply.is_some_and(|r| r.kind == JsonRpcKind::Error);
    let url_first = reply.is_some_and(|r| r.error_code == Some(-32042));
    discover_refused || url_first || withdrawn(hop)
}
