//! What a grouper kept from pass to pass needs besides deciding: learning a hop's request body
//! and response once they have come, and naming the traces that changed since it was last asked.

use super::{Grouper, TraceDraft, TraceKind};
use crate::group::evidence::TraceInput;
use crate::group::text_match::MatchText;
use tracer_wire::hop::Role;

impl Grouper {
    /// Whether a trace of that id is known (opened here, or placed).
    pub fn knows(&self, trace_id: &str) -> bool {
        self.by_id.contains_key(trace_id)
    }

    /// The traces that took a hop, or learned more of one, since the last call, each with the
    /// hops it took since then (handed over, not kept: a grouper kept for the life of a proxy
    /// must not hold every hop id it ever saw).
    pub fn take_changed(&mut self) -> Vec<TraceDraft> {
        let mut drafts = Vec::new();
        for index in std::mem::take(&mut self.changed) {
            let Some(state) = self.traces.get_mut(index) else {
                continue;
            };
            drafts.push(TraceDraft {
                id: state.draft.id.clone(),
                title: state.draft.title.clone(),
                kind: state.draft.kind,
                started_ns: state.draft.started_ns,
                ended_ns: state.draft.ended_ns,
                hop_ids: std::mem::take(&mut state.draft.hop_ids),
                session_id: state.draft.session_id.clone(),
            });
        }
        drafts
    }

    /// A hop of `trace_id` fed while in flight (`before`) has more now (`after`): its end, and
    /// what its response says (the tool calls a model asked for, an MCP result). A replay of
    /// every hop would have read the same from the finished hop.
    pub fn refresh(&mut self, trace_id: &str, before: &TraceInput, after: &TraceInput) {
        let Some(&index) = self.by_id.get(trace_id) else {
            return;
        };
        let Some(state) = self.traces.get_mut(index) else {
            return;
        };
        if before.ended_ns.is_none()
            && !before.standing_stream
            && let Some(end) = after.ended_ns
        {
            state.spans.end(before.started_ns, end);
            if before.role == Some(Role::Agent) {
                state.agent_spans.end(before.started_ns, end);
            }
            state.draft.ended_ns = state.ended();
        }
        for call in &after.asked_calls {
            if !before.asked_calls.contains(call) {
                state.asked.push((call.clone(), false));
            }
        }
        if before.mcp_result.is_none() {
            state.results.extend(after.mcp_result.iter().cloned());
        }
        let mut request_in_session = None;
        // An agent hop fed before its request was read learns the user's text now.
        if before.user_text.is_none()
            && let Some(text) = &after.user_text
        {
            state.texts.push(MatchText::new(text));
            if state.draft.title.is_none() {
                state.draft.title = after.title_text.clone();
            }
            if state.draft.kind == TraceKind::Request {
                request_in_session = Some(state.session);
            }
        }
        // A WebSocket fed while open learns its turns' user words when it ends: its trace is a
        // user's request, titled by them, as a replay of the finished hop would open it.
        if before.latest_user_text.is_none()
            && let Some(text) = &after.latest_user_text
        {
            state.texts.push(MatchText::new(text));
            state.model_requests += 1;
            if state.draft.title.is_none() {
                state.draft.title = after.title_text.clone().or_else(|| Some(text.clone()));
            }
            state.draft.kind = TraceKind::Request;
            request_in_session = Some(state.session);
        }
        if let Some(session) = request_in_session {
            self.mark_request(session);
        }
        self.changed.insert(index);
    }
}
