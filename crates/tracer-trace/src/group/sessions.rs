//! Sessions above traces: which run of a host a hop belongs to, from the host's own session id,
//! the MCP session it names, and the boundaries of processes (a second `initialize` of a route).
//!
//! A session is one run of an agent. Hosts that name their run (`x-claude-code-session-id`,
//! Codex `session-id`, opencode `x-session-id`) are told apart by that id. MCP hops never carry
//! it, and `Mcp-Session-Id` is redacted in the record: they belong to the session that last had a
//! hop from the same connection (client address and port), else to the latest session, except
//! that an `initialize` of a route that session has initialized already starts a new process, so
//! a new session. A session opened by MCP start-up takes the first host id that comes
//! after it. A `tracer run` is a boundary above all of these: a hop recorded during a run joins
//! only a session of that run, and a hop of no run only a session of no run. Traces never cross
//! sessions: every decision by content or time looks only at the traces of the hop's session. Only request-side facts (headers, the JSON-RPC method, start
//! times) are read, so a hop fed in flight decides as its finished replay does.

use super::Grouper;
use super::types::SessionDraft;
use crate::group::evidence::TraceInput;
use tracer_wire::hop::Role;

/// How long a session with no new hop stays open. Not longer than the look-back of a grouping pass
/// (tracer-live's `feed::LOOKBACK_NS`), so a one-shot pass knows every session a rebuild would.
pub const SESSION_IDLE_NS: i64 = 15 * 60 * 1_000_000_000;

/// How many client addresses are remembered before those of closed sessions are forgotten.
const PEERS_KEPT: usize = 4096;

/// What the grouper remembers about one session.
#[derive(Debug)]
pub(super) struct SessionState {
    pub(super) draft: SessionDraft,
    /// MCP routes this session has initialized.
    routes: Vec<String>,
    /// The latest request start of its hops.
    last_ns: i64,
    /// A titled request trace has been opened in it (start-up discovery is over).
    pub(super) has_request: bool,
    /// The stand-in of a stored trace in no session: never written, never joined.
    pub(super) detached: bool,
    /// The `tracer run` its hops were recorded during (None: no run).
    run: Option<String>,
}

impl SessionState {
    fn alive(&self, t: i64) -> bool {
        t.saturating_sub(self.last_ns) <= SESSION_IDLE_NS
    }
}

/// Whether a hop of run `hop` may join a session of run `session`. A `tracer run`'s id is a hard
/// boundary: the same on both sides or nothing. A client process the forward proxy told
/// (`process:…`, best effort) is a soft one: two different processes never share a session, but
/// a hop whose process is unknown (a reverse route's, say) may join a process's session.
fn same_run(session: Option<&str>, hop: Option<&str>) -> bool {
    match (session, hop) {
        (a, b) if a == b => true,
        (None, other) | (other, None) => is_process(other),
        _ => false,
    }
}

fn is_process(run: Option<&str>) -> bool {
    run.is_some_and(|run| run.starts_with(tracer_wire::hop::CLIENT_PROCESS_PREFIX))
}

/// A session as a stored trace names it: its id and the host's id, if known.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KnownSession {
    pub id: String,
    pub host_session: Option<String>,
}

impl Grouper {
    /// The session a hop to be decided belongs to (opened if it is the first of its run).
    pub(super) fn session_for(&mut self, input: &TraceInput) -> usize {
        let t = input.started_ns;
        let run = input.run.as_deref();
        // Alive, and of the hop's run (or, for a hop of no run, of no run).
        let usable = |this: &Self, index: usize| {
            let session = &this.sessions[index];
            session.alive(t) && same_run(session.run.as_deref(), run)
        };
        if let Some(key) = &input.host_session {
            if let Some(&index) = self.by_host.get(key)
                && usable(self, index)
            {
                return index;
            }
            // The run's MCP start-up came first, in a session that did not know its id yet.
            return match self.latest_session(t, run, |s| s.draft.host_session.is_none()) {
                Some(index) => index,
                None => self.open_session(input.hop_id.clone(), Some(key.clone()), t, run),
            };
        }
        if let Some(tag) = &input.mcp_session
            && let Some(&index) = self.by_mcp.get(tag)
            && usable(self, index)
        {
            return index;
        }
        // The session that last had a hop from this very connection (a new process opens new
        // ones), else the latest; a model hop without the host's id (a preconnect) is not of a
        // run that names itself.
        let by_peer = self
            .by_peer
            .get(&input.peer)
            .copied()
            .filter(|&index| usable(self, index));
        let latest = if by_peer.is_some() {
            by_peer
        } else if input.role == Some(Role::Model) {
            self.latest_session(t, run, |s| s.draft.host_session.is_none())
        } else {
            self.latest_session(t, run, |_| true)
        };
        match latest {
            Some(index)
                if !(input.is_initialize()
                    && self.sessions[index].routes.contains(&input.route)) =>
            {
                index
            }
            _ => self.open_session(input.hop_id.clone(), None, t, run),
        }
    }

    /// The session of a stored trace, opened from what the store says of it.
    pub(super) fn known_session(
        &mut self,
        known: &KnownSession,
        t: i64,
        run: Option<&str>,
    ) -> usize {
        if let Some(&index) = self.session_by_id.get(&known.id) {
            return index;
        }
        let index = self.open_session(known.id.clone(), known.host_session.clone(), t, run);
        self.changed_sessions.remove(&index);
        index
    }

    /// A session of its own for a stored trace that has none (see `place_in_session`).
    pub(super) fn detached_session(&mut self, t: i64) -> usize {
        let index = self.open_session(String::new(), None, t, None);
        self.session_by_id.remove("");
        self.changed_sessions.remove(&index);
        if let Some(session) = self.sessions.get_mut(index) {
            session.detached = true;
        }
        index
    }

    /// The alive session opened last among those `accept` takes.
    fn latest_session(
        &self,
        t: i64,
        run: Option<&str>,
        accept: impl Fn(&SessionState) -> bool,
    ) -> Option<usize> {
        self.sessions
            .iter()
            .enumerate()
            .rev()
            .find(|(_, s)| {
                !s.detached && s.alive(t) && same_run(s.run.as_deref(), run) && accept(s)
            })
            .map(|(index, _)| index)
    }

    fn open_session(
        &mut self,
        id: String,
        host_session: Option<String>,
        t: i64,
        run: Option<&str>,
    ) -> usize {
        let index = self.sessions.len();
        self.session_by_id.insert(id.clone(), index);
        if let Some(key) = &host_session {
            self.by_host.insert(key.clone(), index);
        }
        self.sessions.push(SessionState {
            draft: SessionDraft {
                id,
                host_session,
                started_ns: t,
            },
            routes: Vec::new(),
            last_ns: t,
            has_request: false,
            detached: false,
            run: run.map(str::to_string),
        });
        self.changed_sessions.insert(index);
        index
    }

    /// What a hop added to `index` tells its session: the host's id, the MCP session, a route
    /// initialized.
    pub(super) fn note_session(&mut self, index: usize, input: &TraceInput) {
        if self.sessions.get(index).is_none_or(|s| s.detached) {
            return;
        }
        let t = input.started_ns;
        // The host's id, when this session has none and no other alive session holds it.
        let adopt = input
            .host_session
            .as_ref()
            .filter(|key| {
                self.sessions
                    .get(index)
                    .is_some_and(|s| s.draft.host_session.is_none())
                    && !self
                        .by_host
                        .get(*key)
                        .is_some_and(|&other| other != index && self.sessions[other].alive(t))
            })
            .cloned();
        let Some(session) = self.sessions.get_mut(index) else {
            return;
        };
        session.last_ns = session.last_ns.max(t);
        // A session opened by a hop whose process is unknown (a reverse route's) learns it.
        if session.run.is_none() && is_process(input.run.as_deref()) {
            session.run.clone_from(&input.run);
        }
        session.draft.started_ns = session.draft.started_ns.min(t);
        if input.is_initialize() && !session.routes.contains(&input.route) {
            session.routes.push(input.route.clone());
        }
        if let Some(key) = adopt {
            session.draft.host_session = Some(key.clone());
            self.by_host.insert(key, index);
            self.changed_sessions.insert(index);
        }
        if let Some(tag) = &input.mcp_session {
            self.by_mcp.entry(tag.clone()).or_insert(index);
        }
        if input.host_session.is_none() {
            self.by_peer.insert(input.peer.clone(), index);
            if self.by_peer.len() > self.peer_limit.max(PEERS_KEPT) {
                // Connections of closed sessions are forgotten; the limit doubles past what is
                // left, so a proxy serving many connections does this rarely.
                let sessions = &self.sessions;
                self.by_peer.retain(|_, s| sessions[*s].alive(t));
                self.peer_limit = 2 * self.by_peer.len();
            }
        }
    }

    /// The sessions opened, or that learned their host's id, since the last call.
    pub fn take_changed_sessions(&mut self) -> Vec<SessionDraft> {
        std::mem::take(&mut self.changed_sessions)
            .into_iter()
            .filter_map(|index| self.sessions.get(index))
            .filter(|s| !s.detached)
            .map(|s| s.draft.clone())
            .collect()
    }

    /// Every session built so far, in the order they were opened.
    pub(crate) fn sessions(&self) -> Vec<SessionDraft> {
        self.sessions
            .iter()
            .filter(|s| !s.detached)
            .map(|s| s.draft.clone())
            .collect()
    }
}
