//! The public shapes of grouping: trace kinds, reasons, assignments, drafts and options.

/// Whether a trace is one user request, or the discovery a host does at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    Request,
    Setup,
}

impl TraceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceKind::Request => "request",
            TraceKind::Setup => "setup",
        }
    }
}

/// Why a hop was put in its trace (most trusted first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Carries the trace id of a `traceparent` (header or MCP `_meta`).
    Traceparent,
    /// A request on an agent route: opens a trace.
    OpensAgentRequest,
    /// No agent route: a model request with a user message no open trace has.
    OpensUserText,
    /// A model request carrying the user text of the trace.
    UserText,
    /// A model request whose history holds tool calls or results of the trace.
    History,
    /// An MCP `tools/call` the trace's model asked for.
    ToolCall,
    /// A model request of a subagent (its first user message the prompt of a `Task` call the
    /// trace's model asked for).
    Subagent,
    /// A discovery call near in time to the trace's start.
    Discovery,
    /// A discovery call at host start-up: the setup trace.
    Setup,
    /// No evidence but time: the nearest open trace.
    Time,
    /// A call a caller made by itself (a REST tool call, a program's own request) with no user
    /// request open around it: a trace of its own, titled by the call.
    OwnCall,
    /// No evidence at all and nothing near in time: a trace of its own.
    Alone,
}

/// The decision for one hop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub hop_id: String,
    pub trace_id: String,
    pub reason: Reason,
}

/// A trace as grouping built it.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceDraft {
    pub id: String,
    /// The user's text that opened it (None for setup traces and hops alone).
    pub title: Option<String>,
    pub kind: TraceKind,
    pub started_ns: i64,
    /// The end of its last hop; None while any hop is in flight.
    pub ended_ns: Option<i64>,
    pub hop_ids: Vec<String>,
    /// The session (run of a host) the trace belongs to; None for a trace stored before
    /// sessions, which is left in none.
    pub session_id: Option<String>,
}

/// A session as grouping built it: one run of a host, above its traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionDraft {
    /// The id of the hop that opened it.
    pub id: String,
    /// The host's own id of its run, once a hop carried one (`x-claude-code-session-id`, ...).
    pub host_session: Option<String>,
    pub started_ns: i64,
}

/// Tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupOptions {
    /// How long after its last activity a trace without an open agent hop stays open.
    pub window_ns: i64,
    /// How far the record (the starts of hops stored since) may go past an unfinished hop while
    /// live grouping holds later hops whose decision reads evidence it still owes
    /// (`group::readiness`).
    pub hold_ns: i64,
    /// The same limit in wall time, for when nothing else is recorded.
    pub idle_hold_ns: i64,
}

impl Default for GroupOptions {
    fn default() -> Self {
        Self {
            window_ns: 60_000_000_000,
            hold_ns: 3_000_000_000,
            idle_hold_ns: 10_000_000_000,
        }
    }
}

/// The result of grouping a slice of hops.
#[derive(Debug, Clone, PartialEq)]
pub struct Grouping {
    pub traces: Vec<TraceDraft>,
    pub assignments: Vec<Assignment>,
    pub sessions: Vec<SessionDraft>,
}
