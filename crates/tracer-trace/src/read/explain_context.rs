//! What the whole trace tells the explanation of each of its hops: the model API the host speaks
//! (so a tool's result is said to go back as a `tool_result` block, a `function_call_output`
//! item or a `role: tool` message) and the MCP servers' tool lists (where each offered tool
//! comes from), and which of its hops are side calls.

use crate::RecordedHop;
use crate::read::side_calls::{Conversations, SideCall};
use crate::read::tool_origin::ToolOrigins;
use tracer_wire::dialect::{Dialect, HopReading};

/// The trace around one hop, as its explanation needs it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ExplainContext {
    /// The dialect of the trace's first model request, if it has one.
    pub model_dialect: Option<Dialect>,
    pub origins: ToolOrigins,
    /// Where each hop stands: a side call, or the previous request of its conversation.
    pub conversations: Conversations,
    /// The hops' ids, in the order given to `of_trace`.
    pub hop_ids: Vec<String>,
    /// What the trace's tools answered, as text (`host_patterns::tool_outputs`).
    pub tool_outputs: Vec<String>,
}

impl ExplainContext {
    /// The context of a trace's hops and their readings (same order).
    pub(crate) fn of_trace(hops: &[RecordedHop], readings: &[HopReading]) -> Self {
        let mut order: Vec<usize> = (0..hops.len().min(readings.len())).collect();
        order.sort_by_key(|&i| hops[i].start.started_unix_ns);
        let model_dialect = order
            .iter()
            .map(|&i| readings[i].dialect)
            .find(|dialect| dialect.is_model_chat());
        let routes: Vec<&str> = hops.iter().map(|hop| hop.start.route.as_str()).collect();
        Self {
            model_dialect,
            origins: ToolOrigins::of_trace(readings, &routes),
            conversations: Conversations::of_trace(hops, readings),
            hop_ids: hops.iter().map(|hop| hop.start.id.clone()).collect(),
            tool_outputs: crate::read::host_patterns::tool_outputs(hops, readings),
        }
    }

    /// The side call the hop of that id is, if it is one.
    pub(crate) fn side_call_of(&self, hop_id: &str) -> Option<SideCall> {
        let index = self.hop_ids.iter().position(|id| id == hop_id)?;
        self.conversations.side_call(index)
    }
}
