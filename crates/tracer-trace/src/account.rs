//! Accounting: tokens made comparable across APIs, list prices and cost, the prompt cache's
//! verdicts, what each part of a context and each tool costs, one line about a whole trace.

pub mod agent_join;
pub mod cache_verdict;
pub mod context_shares;
pub mod cost;
pub mod prices;
pub mod summary;
pub mod tokens;
pub mod tool_context;
