//! The JSON hop log (schema: docs/hop-log.schema.json): one trace, its numbered and explained messages with
//! headers, bodies and timings, and the per-hop fields that rebuild the recorded hops exactly.
//!
//! Described by `docs/hop-log.schema.json`; `tracer show --json` prints it, `tracer import` reads
//! it back, and export → import → export gives the same bytes.

mod agent_entry;
mod body;
mod context;
mod cost;
mod embedded_json;
mod json_layout;
mod loaded;
mod message_entry;
mod parts;
mod rebuild;
mod streamed;
mod tokens;
mod trace_words;
mod ws_entry;

use serde::{Deserialize, Serialize};

use message_entry::message_entry;
use tracer_store::traces::TraceRow;
use tracer_store::{Store, StoreError};
use tracer_trace::{RecordedHop, TraceSummary, explain_trace, summarize};
use tracer_wire::hop::{HopState, Role, Transport};

pub use agent_entry::AgentEventEntry;
pub use body::{Body, HeaderEntry};
pub use context::{ContextEntry, ContextPartEntry, NewEntry};
pub use cost::CostEntry;
pub use message_entry::{Bodies, ChunkEntry, Timings};
pub use tokens::TokenEntry;
pub use ws_entry::{WsEntry, WsMessageEntry};

/// The value of the top-level `format` field.
const FORMAT: &str = "tracer.hop-log";
/// The version of the hop log this build writes. Version 2 added the `tokens` objects; version
/// 3 the messages of an SSE answer (`part`) and the answers no one sent (`unsent`); version 4
/// the `cost` and `context` objects and the trace's `last_prompt`; version 5 the trace's
/// `side_calls_failed` and `host_tools_used`; version 6 the agent's own telemetry
/// (`agent_events`).
pub(crate) const VERSION: u32 = 6;
/// The oldest version this build still reads (a version 1 log has no `tokens`).
const OLDEST_VERSION: u32 = 1;
/// `created_by` of traces that `import` writes (a re-grouping leaves them alone).
pub(crate) const IMPORTED_BY: &str = "import";

#[derive(Debug, thiserror::Error)]
pub enum HopLogError {
    #[error("not a tracer hop log: {0}")]
    NotHopLog(String),
    #[error(
        "hop log version {found} is not supported (this tracer reads versions {OLDEST_VERSION} to {VERSION})"
    )]
    Version { found: u64 },
    #[error("malformed hop log: {0}")]
    Malformed(String),
    #[error("trace {0} is already in the database")]
    TraceExists(String),
    #[error("hop {0} is already in the database")]
    HopExists(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One trace as a hop log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HopLog {
    format: String,
    version: u32,
    trace: TraceEntry,
    messages: Vec<MessageEntry>,
    hops: Vec<HopEntry>,
    /// The agent's own telemetry placed among the messages (version 6; absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    agent_events: Vec<AgentEventEntry>,
}

/// The trace: its stored row and what `tracer ls` says about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceEntry {
    pub id: String,
    /// The user's text that opened the trace; a setup trace's one name, "(start-up discovery)".
    pub title: Option<String>,
    /// `request` or `setup`.
    pub kind: String,
    pub started_unix_ns: i64,
    pub ended_unix_ns: Option<i64>,
    /// How the user's request went; failed side calls are counted apart (`side_calls_failed`).
    pub status: String,
    /// Side calls (the host's telemetry, account, feature flags, titles) that failed; absent
    /// when none did (and in logs before version 5).
    #[serde(default, skip_serializing_if = "trace_words::is_zero")]
    pub side_calls_failed: usize,
    pub duration_ns: Option<i64>,
    pub hop_count: usize,
    pub message_count: usize,
    pub tools_used: Vec<String>,
    /// The host's own tools the model called (Claude Code's `Bash`, `Read`); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_tools_used: Vec<String>,
    /// The tokens its model hops reported, summed (absent when none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenEntry>,
    /// What its model calls cost at list prices, summed (absent when it made none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostEntry>,
    /// The prompt tokens of its last model call that reported usage: the context it carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_prompt: Option<u64>,
    /// The session (run of a host) it belongs to (absent when grouping named none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionEntry>,
    /// The trace it was forked from, when `tracer fork` made it (listings only: a hop log never
    /// carries it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkEntry>,
}

/// A fork's link to its original: where it was forked, with which edits, where it went live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkEntry {
    /// The original trace.
    pub of: String,
    /// The message the edits were made at.
    pub at: i64,
    /// The edits, as `tracer fork` stored them.
    pub edits: serde_json::Value,
    /// How many requests were answered from the recording.
    pub replayed: i64,
    /// Where it went live, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_reason: Option<String>,
}

impl ForkEntry {
    pub fn of(row: &tracer_store::forks::ForkRow) -> ForkEntry {
        ForkEntry {
            of: row.fork_of.clone(),
            at: row.at_message,
            edits: serde_json::from_str(&row.edits).unwrap_or(serde_json::Value::Null),
            replayed: row.replayed,
            live_at: row.live_at_message,
            live_reason: row.live_reason.clone(),
        }
    }
}

/// A trace's session: one run of a host, above its traces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionEntry {
    /// The id of the hop that opened the session.
    pub id: String,
    /// The host's own id of its run (`x-claude-code-session-id`, Codex `session-id`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_session_id: Option<String>,
}

impl SessionEntry {
    pub fn of(row: &tracer_store::sessions::SessionRow) -> SessionEntry {
        SessionEntry {
            id: row.id.clone(),
            host_session_id: row.host_session_id.clone(),
        }
    }
}

impl TraceEntry {
    /// The stored row with what its hops say about it (as `tracer ls` lists it).
    pub fn new(row: TraceRow, summary: TraceSummary) -> TraceEntry {
        let title = match row.title {
            Some(title) => Some(title),
            None => tracer_trace::account::summary::trace_name(None, Some(&row.kind), &[]),
        };
        TraceEntry {
            id: row.id,
            title,
            kind: row.kind,
            started_unix_ns: row.started_unix_ns,
            ended_unix_ns: row.ended_unix_ns,
            status: summary.status.as_str().to_string(),
            side_calls_failed: summary.side_calls_failed,
            duration_ns: summary.duration_ns,
            hop_count: summary.hops,
            message_count: summary.messages,
            tools_used: summary.tools_used,
            host_tools_used: summary.host_tools_used,
            tokens: TokenEntry::of(&summary.tokens),
            cost: CostEntry::of_sum(&summary.cost),
            last_prompt: summary.last_prompt,
            session: None,
            fork: None,
        }
    }
}

/// One numbered message: a hop's request (→) or response (←), explained, with its bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageEntry {
    pub number: usize,
    /// `→` for a request, `←` for a response.
    pub direction: String,
    /// The number of the hop's request message: a hop is named by it.
    pub(crate) hop: usize,
    pub hop_id: String,
    pub from: String,
    pub to: String,
    pub at_unix_ns: i64,
    pub method: String,
    pub path: String,
    /// The response's HTTP status (null for requests and for responses that never came).
    pub status: Option<u16>,
    pub(crate) dialect: String,
    /// The explanation case's stable name, e.g. `model_tool_call`.
    pub(crate) case: String,
    pub summary: String,
    pub explanation: String,
    /// On a model's answer: the tokens it reported (absent elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenEntry>,
    /// On a model's answer: what the call cost at list prices, or why that is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostEntry>,
    /// On a model request: what its context is made of (see `ContextEntry`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context: Option<ContextEntry>,
    pub timings: Timings,
    pub(crate) headers: Vec<HeaderEntry>,
    pub(crate) body: Body,
    /// Which JSON-RPC message of the hop's SSE answer this is (a server's request, a
    /// notification); such an entry carries no headers or body (the hop's answer holds them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) part: Option<usize>,
    /// The hop's answer kept for the record though no message was sent (a stdio notification's,
    /// a 202 receipt, a withdrawn call's end): not shown, and numbered as its request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) unsent: bool,
}

/// What a hop is beyond its two messages: where it ran and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HopEntry {
    pub(crate) number: usize,
    pub id: String,
    pub route: String,
    pub(crate) role: Role,
    pub transport: Transport,
    pub(crate) peer: String,
    pub(crate) url: String,
    pub state: HopState,
    pub(crate) error: Option<String>,
    /// How the hop ended when that is no failure ("the client stopped reading after the last
    /// event (response.completed)"); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    /// A WebSocket hop's messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) websocket: Option<WsEntry>,
}

impl HopLog {
    /// The session the trace belongs to, when known.
    pub fn session(&self) -> Option<&SessionEntry> {
        self.trace.session.as_ref()
    }

    /// A hop-log file read and explained again from its hops, as if it had been imported and
    /// exported (`tracer show FILE`, `tracer export FILE`): the same document `import` then
    /// `export` would give, without a database.
    pub fn from_file(bytes: &[u8]) -> Result<HopLog, HopLogError> {
        let read = HopLog::from_json(bytes)?;
        let mut trace = read.loaded_checked()?;
        for end in trace.hops.iter_mut().filter_map(|hop| hop.end.as_mut()) {
            tracer_trace::settle_old_record(end);
        }
        // The agent's own events as the file places them (no database to place them again).
        Ok(HopLog::from_loaded(&trace, Bodies::Kept).with_entries(read.agent_events))
    }

    /// The hop log of a trace row and its hops, each message explained.
    pub fn from_recorded(row: TraceRow, hops: &[RecordedHop]) -> HopLog {
        HopLog::from_recorded_with(row, hops, Bodies::Kept)
    }

    /// The log of these hops, its entries carrying the bodies or only their lengths.
    pub(crate) fn from_recorded_with(
        row: TraceRow,
        hops: &[RecordedHop],
        bodies: Bodies,
    ) -> HopLog {
        let summary = summarize(hops);
        let explained = explain_trace(hops);
        let mut numbers = vec![0; hops.len()];
        let messages: Vec<MessageEntry> = explained
            .iter()
            .map(|message| {
                let hop = &hops[message.hop_index];
                numbers[message.hop_index] = message.hop_number;
                message_entry(message, hop, bodies)
            })
            .collect();
        let mut messages = parts::with_unsent_answers(messages, hops, &explained, bodies);
        let shares = tracer_trace::account::context_shares::context_shares(hops);
        for message in messages
            .iter_mut()
            .filter(|m| m.direction == "→" && m.part.is_none() && !m.unsent)
        {
            if let Some(found) = shares.iter().find(|s| s.hop_id == message.hop_id) {
                message.context = Some(ContextEntry::of(found));
            }
        }
        let mut hop_entries: Vec<HopEntry> = hops
            .iter()
            .zip(&numbers)
            .map(|(hop, &number)| HopEntry {
                number,
                id: hop.start.id.clone(),
                route: hop.start.route.clone(),
                role: hop.start.role,
                transport: hop.start.transport,
                peer: hop.start.peer.clone(),
                url: hop.start.url.clone(),
                state: hop
                    .end
                    .as_ref()
                    .and_then(|e| e.state)
                    .unwrap_or(HopState::InFlight),
                error: hop.end.as_ref().and_then(|e| e.error.clone()),
                note: hop.end.as_ref().and_then(|e| e.note.clone()),
                websocket: hop
                    .end
                    .as_ref()
                    .and_then(|e| e.websocket.as_ref())
                    .map(WsEntry::of),
            })
            .collect();
        hop_entries.sort_by_key(|hop| hop.number);
        let version = trace_words::version_of(&messages, &summary);
        HopLog {
            format: FORMAT.to_string(),
            version,
            trace: TraceEntry {
                message_count: messages.iter().filter(|m| !m.unsent).count(),
                ..TraceEntry::new(row, summary)
            },
            messages,
            hops: hop_entries,
            agent_events: Vec::new(),
        }
    }

    /// Reads a hop log, saying what is wrong when the bytes are not one.
    pub fn from_json(bytes: &[u8]) -> Result<HopLog, HopLogError> {
        let value: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| HopLogError::NotHopLog(format!("not JSON ({e})")))?;
        let Some(object) = value.as_object() else {
            return Err(HopLogError::NotHopLog("the JSON is not an object".into()));
        };
        match object.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            Some(other) => {
                return Err(HopLogError::NotHopLog(format!(
                    "\"format\" is \"{other}\", expected \"{FORMAT}\""
                )));
            }
            None => {
                return Err(HopLogError::NotHopLog(format!(
                    "no \"format\": \"{FORMAT}\" field"
                )));
            }
        }
        match object.get("version").and_then(|v| v.as_u64()) {
            Some(v) if (u64::from(OLDEST_VERSION)..=u64::from(VERSION)).contains(&v) => {}
            Some(found) => return Err(HopLogError::Version { found }),
            None => {
                return Err(HopLogError::Malformed(
                    "no numeric \"version\" field".into(),
                ));
            }
        }
        let log: HopLog =
            serde_json::from_value(value).map_err(|e| HopLogError::Malformed(e.to_string()))?;
        log.recorded_hops_checked()?;
        Ok(log)
    }

    /// The hop log as pretty-printed JSON (two-space indent, key order as in the schema).
    pub fn to_json_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The recorded hops, rebuilt exactly as they were stored (for replay and re-explaining).
    pub fn recorded_hops(&self) -> Vec<RecordedHop> {
        self.recorded_hops_checked().unwrap_or_default()
    }

    pub fn trace_id(&self) -> &str {
        &self.trace.id
    }

    pub fn title(&self) -> Option<&str> {
        self.trace.title.as_deref()
    }

    pub fn trace(&self) -> &TraceEntry {
        &self.trace
    }

    /// Names the trace a fork, for the text faces (`show`); a hop log written keeps no fork.
    pub fn with_fork(mut self, fork: Option<ForkEntry>) -> HopLog {
        self.trace.fork = fork;
        self
    }

    /// Every entry, the unsent answers included (they rebuild their hops).
    pub fn messages(&self) -> &[MessageEntry] {
        &self.messages
    }

    /// The messages that were sent, numbered 1..M: what `tracer show` shows.
    pub fn shown_messages(&self) -> impl Iterator<Item = &MessageEntry> {
        self.messages.iter().filter(|m| !m.unsent)
    }

    pub fn hops(&self) -> &[HopEntry] {
        &self.hops
    }

    /// Writes the trace and its hops into a database, all or nothing, in one transaction.
    pub async fn import(&self, store: &Store) -> Result<String, HopLogError> {
        rebuild::import(self, store).await
    }
}
