//! The trace's status and tools in words (`ok · 3 side calls failed`, `append (mcp) · Bash
//! (host)`), and the version a log is written as.

use super::{MessageEntry, TraceEntry};
use tracer_trace::TraceSummary;

pub(super) fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl TraceEntry {
    /// `ok`, or `ok · 3 side calls failed`: the status with the failed side calls beside it.
    pub fn status_words(&self) -> String {
        tracer_trace::account::summary::status_words(&self.status, self.side_calls_failed)
    }

    /// `append`, `append (mcp) · Bash, Read (host)`: the tools it used, joined by `separator`.
    pub fn tools_words(&self, separator: &str) -> Option<String> {
        tracer_trace::account::summary::tools_words(
            &self.tools_used,
            &self.host_tools_used,
            separator,
        )
    }
}

/// A log is written as the oldest version that has every kind of entry it holds: version 5 for
/// failed side calls and host tools, 4 for cost objects, 3 for SSE parts and unsent answers,
/// else 2, as it always was.
pub(super) fn version_of(messages: &[MessageEntry], summary: &TraceSummary) -> u32 {
    if summary.side_calls_failed > 0 || !summary.host_tools_used.is_empty() {
        5
    } else if messages
        .iter()
        .any(|m| m.cost.is_some() || m.context.is_some())
        || summary.last_prompt.is_some()
    {
        4
    } else if messages.iter().any(|m| m.part.is_some() || m.unsent) {
        3
    } else {
        2
    }
}
