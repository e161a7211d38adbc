//! Reading what a hop carries: the recorded hop and its reading kept, a model request's parts
//! and changes, its conversation and side calls, tool origins and links, MCP outcomes, WebSocket
//! turns, transport moves, messages numbered; pure, and naming no job above it.

pub(crate) mod agent_endpoints;
pub(crate) mod call_moment;
pub(crate) mod callers;
pub mod changes_by_call;
pub mod conversation_pairs;
pub mod dates;
pub(crate) mod explain_context;
pub(crate) mod failed_hop;
pub(crate) mod host_patterns;
pub mod host_tools;
pub(crate) mod mcp_outcome;
pub(crate) mod message_notes;
pub(crate) mod numbering;
pub(crate) mod openapi_calls;
pub mod prompt_regions;
pub mod read_once;
pub mod recorded_hop;
pub mod request_anatomy;
pub mod request_changes;
pub mod request_parts;
pub mod request_views;
pub mod search_text;
pub mod side_calls;
pub(crate) mod stopped_reading;
pub(crate) mod subagents;
pub(crate) mod tool_call_links;
pub mod tool_links;
pub(crate) mod tool_origin;
pub(crate) mod transport_moves;
pub mod ws_turns;

pub use recorded_hop::RecordedHop;
