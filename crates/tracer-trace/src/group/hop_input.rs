//! A recorded hop's grouping view: its own evidence, and for a WebSocket hop what its turns say.

use crate::group::evidence::TraceInput;
use crate::read::RecordedHop;
use crate::read::ws_turns::turns_of;

impl RecordedHop {
    /// The grouping view of this hop.
    pub fn trace_input(&self) -> TraceInput {
        let own = TraceInput::from_hop(&self.start, self.end.as_ref());
        match self.end.as_ref().and_then(|e| e.websocket.as_ref()) {
            Some(_) => merged_input(self, own),
            None => own,
        }
    }
}

/// The grouping view of a WebSocket hop: its own, plus what its turns say (the user's words,
/// the calls asked and the results sent back), so its trace is found and titled like HTTP turns.
fn merged_input(hop: &RecordedHop, own: TraceInput) -> TraceInput {
    let mut merged = own;
    for turn in turns_of(hop) {
        let input = turn.trace_input();
        if merged.latest_user_text.is_none() {
            merged.latest_user_text = input.latest_user_text;
        }
        if merged.title_text.is_none() {
            merged.title_text = input.title_text;
        }
        merged.user_texts.extend(input.user_texts);
        merged.history_calls.extend(input.history_calls);
        merged.tool_results.extend(input.tool_results);
        merged.asked_calls.extend(input.asked_calls);
    }
    merged
}
