//! The words for a host's standing stream for server messages: open while the host runs, closed
//! when it stops; neither holds a trace open nor fails it.

use super::CaseText;
use super::table_mcp::{McpCase, mcp};

pub const TOOL_SERVERS: &[CaseText] = &[
    mcp(
        McpCase::StandingStreamOpen,
        "standing_stream_open",
        "open: the host's standing stream for server messages",
        "The host keeps this GET open for as long as it runs, so that the server can send requests and notifications of its own outside any answer. It waits for no answer: it holds no trace open, and the calls the host makes meanwhile get traces of their own.",
    ),
    mcp(
        McpCase::StandingStreamClosed,
        "standing_stream_closed",
        "the host closed its standing stream after {open_for}",
        "The host stopped listening for server messages (it ended its session, or stopped running). A standing stream has no end of its own: this is how it ends, not a failure.",
    ),
];
