//! What the whole trace tells the explanation of each of its hops: the model API the host speaks
//! (so a tool's result is said to go back as a `tool_result` block, a `function_call_output`
//! item or a `role: tool` message) and the MCP servers' tool lists (where each offered tool
//! comes from).

use super::RecordedHop;
use super::tool_origin::ToolOrigins;
use crate::wire::dialect::{Dialect, HopReading};

/// The trace around one hop, as its explanation needs it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExplainContext {
    /// The dialect of the trace's first model request, if it has one.
    pub model_dialect: Option<Dialect>,
    pub origins: ToolOrigins,
}

impl ExplainContext {
    /// The context of a trace's hops and their readings (same order).
    pub fn of_trace(hops: &[RecordedHop], readings: &[HopReading]) -> Self {
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
        }
    }
}
