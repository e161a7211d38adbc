//! Grouping hops into traces, in order of trust: traceparent, content, discovery, time.
//!
//! Pure: a `Grouper` takes hops in the order their requests started and says which trace each
//! belongs to; `group` runs it over a slice. Trace ids are deterministic (the W3C trace id, else
//! the id of the hop that opened the trace), so re-running over a database gives the same result.

use std::collections::HashMap;

mod discovery;
pub(crate) mod evidence;
mod hop_input;
pub mod readiness;
mod refresh;
mod sessions;
mod state;
pub(crate) mod text_match;
mod types;

use sessions::SessionState;
pub use sessions::{KnownSession, SESSION_IDLE_NS};
use state::{Spans, TraceState};
pub use types::{Assignment, GroupOptions, Grouping, Reason, SessionDraft, TraceDraft, TraceKind};

use crate::group::evidence::{CallKey, TraceInput};
use crate::group::text_match::MatchText;
use tracer_wire::hop::Role;

/// Assigns hops to traces as they arrive (in order of request start).
#[derive(Debug, Default)]
pub struct Grouper {
    options: GroupOptions,
    traces: Vec<TraceState>,
    /// Traces that may still take hops by content or time (the rest only by trace id).
    active: Vec<usize>,
    by_id: HashMap<String, usize>,
    seen_agent: bool,
    /// Traces that took a hop (or learned more of one) since `take_changed` last asked.
    changed: std::collections::BTreeSet<usize>,
    /// Sessions (runs of a host) in the order they were opened, and their indexes by id, by the
    /// host's own id, by MCP session and by client address.
    sessions: Vec<SessionState>,
    session_by_id: HashMap<String, usize>,
    by_host: HashMap<String, usize>,
    by_mcp: HashMap<String, usize>,
    /// The session that last had a hop without a host id from each client address.
    by_peer: HashMap<String, usize>,
    peer_limit: usize,
    changed_sessions: std::collections::BTreeSet<usize>,
}

impl Grouper {
    pub fn new(options: GroupOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// Puts a hop in a known trace without deciding (hops grouped earlier, or by hand); a trace
    /// new to the grouper joins the hop's session, decided as for a new hop.
    pub fn place(&mut self, input: &TraceInput, trace_id: &str, kind: TraceKind) {
        let index = match self.by_id.get(trace_id) {
            Some(index) => *index,
            None => {
                let session = self.session_for(input);
                self.open(trace_id.to_string(), None, kind, input.started_ns, session)
            }
        };
        self.placed(index, input);
    }

    /// `place`, for a trace the store holds, in the session the store names for it (None for a
    /// trace stored before sessions, or imported without one: it stays in no session, and takes
    /// only hops of its own trace id).
    pub fn place_in_session(
        &mut self,
        input: &TraceInput,
        trace_id: &str,
        kind: TraceKind,
        session: Option<&KnownSession>,
    ) {
        let index = match self.by_id.get(trace_id) {
            Some(index) => *index,
            None => {
                let session = match session {
                    Some(known) => {
                        self.known_session(known, input.started_ns, input.run.as_deref())
                    }
                    None => self.detached_session(input.started_ns),
                };
                self.open(trace_id.to_string(), None, kind, input.started_ns, session)
            }
        };
        self.placed(index, input);
    }

    fn placed(&mut self, index: usize, input: &TraceInput) {
        if let Some(call) = &input.mcp_call
            && let Some(entry) = self.traces[index]
                .asked
                .iter_mut()
                .find(|(asked, used)| !used && asked == call)
        {
            entry.1 = true;
        }
        self.add(index, input);
    }

    /// Decides the trace of one hop, records it, and returns the decision.
    pub fn assign(&mut self, input: &TraceInput) -> Assignment {
        let (index, reason) = self.decide(input);
        self.add(index, input);
        Assignment {
            hop_id: input.hop_id.clone(),
            trace_id: self.traces[index].draft.id.clone(),
            reason,
        }
    }

    /// The traces built so far, in the order they were opened.
    pub(crate) fn traces(&self) -> Vec<TraceDraft> {
        self.traces.iter().map(|t| t.draft.clone()).collect()
    }

    /// Forgets traces that closed more than a window ago; hops arrive in start order.
    fn prune(&mut self, t: i64) {
        let window = self.options.window_ns;
        let traces = &self.traces;
        self.active.retain(|index| {
            traces[*index].is_open(t, window) || traces[*index].distance(t) <= window
        });
    }

    fn active_traces(&self) -> impl Iterator<Item = (usize, &TraceState)> {
        self.active
            .iter()
            .map(|index| (*index, &self.traces[*index]))
    }

    fn decide(&mut self, input: &TraceInput) -> (usize, Reason) {
        let t = input.started_ns;
        self.prune(t);
        if let Some(trace_id) = &input.trace_id {
            if let Some(index) = self.by_id.get(trace_id) {
                return (*index, Reason::Traceparent);
            }
            if input.housekeeping {
                let session = self.session_for(input);
                if let Some(found) = self.by_housekeeping(input, session, Some(trace_id)) {
                    return found;
                }
            }
            let title = input.user_text.clone().or(input.latest_user_text.clone());
            let session = self.session_for(input);
            let index = self.open(trace_id.clone(), title, TraceKind::Request, t, session);
            self.traces[index].draft.title = input.title_text.clone();
            return (index, Reason::Traceparent);
        }
        let session = self.session_for(input);
        if input.housekeeping
            && let Some(found) = self.by_housekeeping(input, session, None)
        {
            return found;
        }
        if input.role == Some(Role::Agent) {
            let title = input.user_text.clone();
            let index = self.open(input.hop_id.clone(), title, TraceKind::Request, t, session);
            self.traces[index].draft.title = input.title_text.clone();
            return (index, Reason::OpensAgentRequest);
        }
        if input.latest_user_text.is_some() || !input.history_calls.is_empty() {
            if let Some(found) = self.by_model_request(input, session) {
                return found;
            }
            if !self.seen_agent
                && let Some(text) = &input.latest_user_text
            {
                let title = Some(text.clone());
                let index = self.open(input.hop_id.clone(), title, TraceKind::Request, t, session);
                // The text matches later requests; only the user's own words title the trace.
                self.traces[index].draft.title = input.title_text.clone();
                return (index, Reason::OpensUserText);
            }
        }
        if let Some(call) = &input.mcp_call
            && let Some(index) = self.by_tool_call(call, t, session)
        {
            return (index, Reason::ToolCall);
        }
        // A preconnect goes where start-up calls go: the trace about to use the connection, else
        // the session's setup; never an untitled trace of its own.
        if input.is_discovery() || input.preconnect {
            return self.by_discovery(input, session);
        }
        self.by_time(input, session)
    }

    /// The open request traces of `session` at `t`.
    fn open_request_traces(
        &self,
        t: i64,
        session: usize,
    ) -> impl Iterator<Item = (usize, &TraceState)> {
        let window = self.options.window_ns;
        self.active_traces().filter(move |(_, s)| {
            s.session == session && s.draft.kind == TraceKind::Request && s.is_open(t, window)
        })
    }

    /// The open trace a model request belongs to, by its user text, then its history.
    fn by_model_request(&self, input: &TraceInput, session: usize) -> Option<(usize, Reason)> {
        let t = input.started_ns;
        let fresh = input.history_calls.is_empty();
        let latest = input.latest_user_text.as_deref().map(MatchText::new);
        let users: Vec<MatchText> = if self.seen_agent {
            input.user_texts.iter().map(|u| MatchText::new(u)).collect()
        } else {
            Vec::new()
        };
        let mut best: Option<(i64, i64, usize, Reason)> = None;
        for (index, state) in self.open_request_traces(t, session) {
            let asked = state
                .asked
                .iter()
                .map(|(c, _)| (c.name.as_str(), &c.arguments));
            if crate::read::subagents::started_by(&input.user_texts, asked) {
                let candidate = (1_000, -state.distance(t), index, Reason::Subagent);
                if best.as_ref().is_none_or(|b| candidate.0 > b.0) {
                    best = Some(candidate);
                }
                continue;
            }
            let mut score = 0i64;
            let mut reason = Reason::History;
            let latest_strength = latest.as_ref().map_or(0, |latest| {
                state
                    .texts
                    .iter()
                    .map(|known| latest.overlap(known))
                    .max()
                    .unwrap_or(0)
            });
            if latest_strength > 0 {
                score += 100 + 10 * i64::from(latest_strength);
                reason = Reason::UserText;
            } else if self.seen_agent {
                if users
                    .iter()
                    .any(|user| state.texts.iter().any(|known| user.overlap(known) > 0))
                {
                    score += 50;
                    reason = Reason::UserText;
                }
            } else if input.latest_user_text.is_some() {
                continue; // without an agent route the latest user message decides alone
            }
            let asked = |call: &CallKey| state.asked.iter().any(|(known, _)| known == call);
            score += 40 * input.history_calls.iter().filter(|c| asked(c)).count() as i64;
            let seen = |text: &String| state.results.iter().any(|known| known == text);
            score += 10 * input.tool_results.iter().filter(|r| seen(r)).count() as i64;
            if score == 0 {
                continue;
            }
            if fresh == (state.model_requests == 0) {
                score += 5;
            }
            let candidate = (score, -state.distance(t), index, reason);
            if best
                .as_ref()
                .is_none_or(|b| (candidate.0, candidate.1) > (b.0, b.1))
            {
                best = Some(candidate);
            }
        }
        best.map(|(_, _, index, reason)| (index, reason))
    }

    /// The open trace whose model asked for this call and has not had it run yet.
    fn by_tool_call(&mut self, call: &CallKey, t: i64, session: usize) -> Option<usize> {
        let mut best: Option<(i64, i64, usize, usize)> = None;
        for (index, state) in self.open_request_traces(t, session) {
            for (slot, (asked, used)) in state.asked.iter().enumerate() {
                let score = match (asked == call, names_match(&asked.name, &call.name)) {
                    (true, _) => 3,
                    (false, true) if asked.arguments == call.arguments => 2,
                    _ => continue,
                } * 2
                    - i64::from(*used);
                let candidate = (score, -state.distance(t), index, slot);
                if best
                    .as_ref()
                    .is_none_or(|b| (candidate.0, candidate.1) > (b.0, b.1))
                {
                    best = Some(candidate);
                }
            }
        }
        let (_, _, index, slot) = best?;
        if let Some(entry) = self.traces[index].asked.get_mut(slot) {
            entry.1 = true;
        }
        Some(index)
    }

    fn open(
        &mut self,
        id: String,
        title: Option<String>,
        kind: TraceKind,
        t: i64,
        session: usize,
    ) -> usize {
        let index = self.traces.len();
        self.by_id.insert(id.clone(), index);
        self.active.push(index);
        self.traces.push(TraceState {
            texts: title.iter().map(|t| MatchText::new(t)).collect(),
            draft: TraceDraft {
                id,
                title,
                kind,
                started_ns: t,
                ended_ns: None,
                hop_ids: Vec::new(),
                session_id: self
                    .sessions
                    .get(session)
                    .filter(|s| !s.detached)
                    .map(|s| s.draft.id.clone()),
            },
            session,
            spans: Spans::default(),
            agent_spans: Spans::default(),
            asked: Vec::new(),
            results: Vec::new(),
            peers: Vec::new(),
            model_requests: 0,
            children: 0,
        });
        index
    }

    fn add(&mut self, index: usize, input: &TraceInput) {
        let Some(state) = self.traces.get_mut(index) else {
            return;
        };
        self.changed.insert(index);
        // A standing stream is open as long as its host runs: it holds no trace open.
        if !input.standing_stream {
            state.spans.push(input.started_ns, input.ended_ns);
        }
        state.draft.hop_ids.push(input.hop_id.clone());
        state.draft.started_ns = state.draft.started_ns.min(input.started_ns);
        state.draft.ended_ns = state.ended();
        if input.role == Some(Role::Agent) {
            if !input.standing_stream {
                state.agent_spans.push(input.started_ns, input.ended_ns);
            }
            self.seen_agent = true;
            if state.draft.title.is_none() {
                state.draft.title = input.title_text.clone();
            }
            state
                .texts
                .extend(input.user_text.iter().map(|t| MatchText::new(t)));
        } else {
            state.children += 1;
            let host = crate::group::text_match::peer_host(&input.peer);
            if !state.peers.contains(&host) {
                state.peers.push(host);
            }
        }
        if input.latest_user_text.is_some() || !input.user_texts.is_empty() {
            state.model_requests += 1;
            if state.draft.title.is_none() {
                state.draft.title = input.title_text.clone();
            }
            if let Some(text) = &input.latest_user_text {
                let text = MatchText::new(text);
                if !state.texts.contains(&text) {
                    state.texts.push(text);
                }
            }
        }
        state
            .asked
            .extend(input.asked_calls.iter().map(|c| (c.clone(), false)));
        state.results.extend(input.mcp_result.iter().cloned());
        let session = state.session;
        if state.draft.kind == TraceKind::Request && state.draft.title.is_some() {
            self.mark_request(session);
        }
        self.note_session(session, input);
    }
}

/// A model may be given an MCP tool under a longer name (open-webui's `tool_get_phonenumber_post`).
fn names_match(asked: &str, called: &str) -> bool {
    asked == called || (!called.is_empty() && asked.contains(called))
}

/// Groups a slice of hops (any order) into traces.
pub fn group(inputs: &[TraceInput], options: GroupOptions) -> Grouping {
    let mut order: Vec<&TraceInput> = inputs.iter().collect();
    order.sort_by_key(|input| input.started_ns);
    let mut grouper = Grouper::new(options);
    let assignments = order
        .into_iter()
        .map(|input| grouper.assign(input))
        .collect();
    Grouping {
        traces: grouper.traces(),
        assignments,
        sessions: grouper.sessions(),
    }
}
