//! The last two kinds of evidence, within one session: discovery (start-up calls join the trace
//! about to use them, or the session's setup trace) and time (the nearest open trace).

use super::state::TraceState;
use super::{Grouper, Reason, TraceKind};
use crate::group::evidence::TraceInput;
use crate::group::text_match::peer_host;

impl Grouper {
    /// Discovery joins the open trace of the same client nearest in time (one that has not
    /// started its work yet first); at the session's start-up, before any user request, its
    /// setup trace.
    pub(super) fn by_discovery(&mut self, input: &TraceInput, session: usize) -> (usize, Reason) {
        let t = input.started_ns;
        let host = peer_host(&input.peer);
        let candidates: Vec<(usize, &TraceState)> = self
            .open_request_traces(t, session)
            .filter(|(_, s)| s.peers.is_empty() || s.peers.contains(&host))
            .collect();
        // A trace that has not started its work yet takes the call, the oldest first (hosts
        // serve requests in the order they came); else the trace nearest in time.
        let fresh = candidates
            .iter()
            .filter(|(_, s)| s.children == 0)
            .min_by_key(|(index, s)| (s.draft.started_ns, *index))
            .map(|(index, _)| *index);
        let best = fresh.or_else(|| {
            candidates
                .iter()
                .min_by_key(|(index, s)| (s.distance(t), usize::MAX - index))
                .map(|(index, _)| *index)
        });
        if let Some(index) = best {
            return (index, Reason::Discovery);
        }
        if self.session_has_request(session) {
            let (index, reason) = self.by_time(input, session);
            if reason == Reason::Time {
                return (index, reason);
            }
            self.traces[index].draft.kind = TraceKind::Setup;
            return (index, Reason::Setup);
        }
        let index = self
            .nearest_setup(t, session)
            .unwrap_or_else(|| self.open(input.hop_id.clone(), None, TraceKind::Setup, t, session));
        (index, Reason::Setup)
    }

    /// A host's housekeeping: on an agent route (sign-in, its model list, its settings) it joins
    /// the session's setup trace near in time, else opens one; never a request trace. A
    /// `traceparent` it carries names that setup trace from then on. Elsewhere (Ollama's
    /// `/api/tags`) it joins a setup trace whose housekeeping request is in flight (open-webui's
    /// `/api/models` asking the model server), else it is placed as any other hop (None).
    pub(super) fn by_housekeeping(
        &mut self,
        input: &TraceInput,
        session: usize,
        trace_id: Option<&String>,
    ) -> Option<(usize, Reason)> {
        let t = input.started_ns;
        let window = self.options.window_ns;
        let index = if input.role == Some(tracer_wire::hop::Role::Agent) {
            self.nearest_setup(t, session).unwrap_or_else(|| {
                self.open(input.hop_id.clone(), None, TraceKind::Setup, t, session)
            })
        } else {
            self.nearest_setup(t, session)
                .filter(|&index| self.traces[index].is_open(t, window))?
        };
        if let Some(trace_id) = trace_id {
            self.by_id.insert(trace_id.clone(), index);
        }
        Some((index, Reason::Setup))
    }

    /// The setup trace of `session` active within the window of `t`, if any.
    fn nearest_setup(&self, t: i64, session: usize) -> Option<usize> {
        let window = self.options.window_ns;
        self.active_traces()
            .filter(|(_, s)| {
                s.session == session && s.draft.kind == TraceKind::Setup && s.distance(t) <= window
            })
            .min_by_key(|(_, s)| s.distance(t))
            .map(|(index, _)| index)
    }

    /// Time, last: the open request trace of the session whose activity is nearest; at the
    /// session's start-up (before any user request) its setup trace, opened if need be; else a
    /// trace of its own. A call of its own (`TraceInput::own_call_title`) joins only a user
    /// request open around it (one with an agent request or a model call), else opens a trace
    /// titled by the call: never a start-up trace, never another such call's trace.
    pub(super) fn by_time(&mut self, input: &TraceInput, session: usize) -> (usize, Reason) {
        let t = input.started_ns;
        let window = self.options.window_ns;
        let own_call = input.own_call_title.is_some();
        let nearest = self
            .active_traces()
            .filter(|(_, s)| {
                s.session == session
                    && s.draft.kind == TraceKind::Request
                    && s.distance(t) <= window
                    && (!own_call || (s.is_user_request() && s.is_open(t, window)))
            })
            .min_by_key(|(index, s)| (!s.is_open(t, window), s.distance(t), usize::MAX - index))
            .map(|(index, _)| index);
        if let Some(index) = nearest {
            return (index, Reason::Time);
        }
        if let Some(title) = &input.own_call_title {
            let index = self.open(input.hop_id.clone(), None, TraceKind::Request, t, session);
            self.traces[index].draft.title = Some(title.clone());
            return (index, Reason::OwnCall);
        }
        if !self.session_has_request(session) {
            // Before the session's first user request: its start-up (a preconnect, a probe).
            let index = self.nearest_setup(t, session).unwrap_or_else(|| {
                self.open(input.hop_id.clone(), None, TraceKind::Setup, t, session)
            });
            return (index, Reason::Setup);
        }
        (
            self.open(input.hop_id.clone(), None, TraceKind::Request, t, session),
            Reason::Alone,
        )
    }

    pub(super) fn session_has_request(&self, session: usize) -> bool {
        self.sessions.get(session).is_some_and(|s| s.has_request)
    }

    pub(super) fn mark_request(&mut self, session: usize) {
        if let Some(s) = self.sessions.get_mut(session) {
            s.has_request = true;
        }
    }
}
