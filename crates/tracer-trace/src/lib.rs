//! Traces: grouping hops into the trace of one user request, numbering its messages, and
//! explaining each message for a newcomer. Pure functions over recorded hops.
//!
//! Its jobs, bottom first: `words` < `read` < `group`, and `read` < `account` < `explain`; no
//! module names a job above it (`scripts/check_trace_jobs.py`).

pub mod account;
pub mod explain;
pub mod group;
pub mod read;
pub mod words;

#[cfg(test)]
mod read_once_tests;

pub use account::summary::{TraceStatus, TraceSummary, summarize, trace_name};
pub use account::tokens::TokenCounts;
pub use explain::Case;
pub use explain::describe::{explain_request, explain_response};
pub use explain::trace_messages::{ExplainedMessage, explain_trace, number_trace};
pub use group::evidence::TraceInput;
pub use group::{GroupOptions, Grouper, Grouping, Reason, TraceKind, group};
pub use read::RecordedHop;
pub use read::numbering::Direction;
pub use read::side_calls::SideCall;
pub use read::stopped_reading::settle_old_record;
