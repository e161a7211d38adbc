//! A request the host withdrew (`notifications/cancelled`) named as such on its own line, once
//! the trace's later messages told it: `· withdrawn by the host in message 128`.

use crate::ExplainedMessage;
use crate::explain::{Case, McpCase, case_text, fill};
use crate::read::numbering::Direction;

/// Adds the withdrawal's words to each withdrawn request's summary and explanation;
/// `withdrawals` are (the request's number, the cancel's number), as `McpTrace` keeps them.
pub(crate) fn name_withdrawn(withdrawals: &[(usize, usize)], messages: &mut [ExplainedMessage]) {
    let Some(row) = case_text(Case::Mcp(McpCase::NoteWithdrawn)) else {
        return;
    };
    for (withdrawn, cancel) in withdrawals {
        let values = [("cancel", cancel.to_string())];
        let request = (messages.iter_mut())
            .find(|m| m.number == *withdrawn && m.direction == Direction::Request);
        if let Some(message) = request {
            message.summary.push_str(&fill(row.summary, &values));
            if !message.explanation.is_empty() {
                message.explanation.push(' ');
            }
            message
                .explanation
                .push_str(&fill(row.explanation, &values));
        }
    }
}
