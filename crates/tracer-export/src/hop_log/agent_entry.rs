//! The agent's own account in the hop log (version 6): each telemetry event placed in the trace,
//! after the message it follows, with its sentence, the rule that placed it and the attributes
//! the agent sent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tracer_live::agent_account::PlacedEvent;
use tracer_trace::explain::agent_words;

use super::{HopLog, MessageEntry};

/// One event of the agent's own telemetry, at its place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentEventEntry {
    /// Its row in `agent_events`.
    pub id: i64,
    /// The name the agent gave it (`claude_code.tool_decision`, `codex.tool_result`).
    pub name: String,
    /// `log`, `span` or `metric`.
    pub signal: String,
    /// The agent, for people (`Claude Code`).
    pub agent: String,
    /// When the agent says it happened.
    pub at_unix_ns: i64,
    /// It happened after this message (the last one before it); null: before the first.
    pub after_message: Option<usize>,
    /// The hop it was placed after; null: before the trace's first hop.
    pub after_hop_id: Option<String>,
    /// The hop it is the agent's own account of, when it is one call's (`api_request`).
    pub of_hop_id: Option<String>,
    /// What placed it: `request id`, `tool call id`, `token tuple`, `prompt id`, `session and
    /// time`, `run and time`.
    pub rule: String,
    /// What it says, in plain words.
    pub sentence: String,
    /// The agent's own cost of the call beside tracer's estimate, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_check: Option<String>,
    /// Its attributes as the agent sent them (redacted; long strings bounded).
    pub attributes: Map<String, Value>,
}

impl HopLog {
    /// The log with the agent's own account placed in it (from `tracer_live::agent_account`).
    pub fn with_agent_events(self, placed: &[PlacedEvent], hop_ids: &[String]) -> HopLog {
        let entries: Vec<AgentEventEntry> = (placed.iter())
            .map(|p| entry(p, hop_ids, &self.messages))
            .collect();
        self.with_entries(entries)
    }

    /// The log with these entries as its agent events (read from a hop-log file).
    pub(crate) fn with_entries(mut self, entries: Vec<AgentEventEntry>) -> HopLog {
        if !entries.is_empty() {
            self.version = self.version.max(6);
        }
        self.agent_events = entries;
        self
    }

    /// The agent's own account, in the order of its places.
    pub fn agent_events(&self) -> &[AgentEventEntry] {
        &self.agent_events
    }
}

fn entry(placed: &PlacedEvent, hop_ids: &[String], messages: &[MessageEntry]) -> AgentEventEntry {
    let event = &placed.stored.event;
    let after_hop = placed.after.and_then(|i| hop_ids.get(i));
    let shown = (messages.iter())
        .filter(|m| !m.unsent)
        .map(|m| (m.number, m.hop_id.as_str(), m.at_unix_ns));
    let after_message =
        agent_words::message_after(shown, after_hop.map(String::as_str), event.time_unix_ns);
    let of_hop_id = placed.of_hop.and_then(|i| hop_ids.get(i)).cloned();
    let tracer_cost = of_hop_id.as_ref().and_then(|hop| {
        (messages.iter())
            .filter(|m| &m.hop_id == hop)
            .find_map(|m| m.cost.as_ref().and_then(|c| c.usd))
    });
    let cost_check = (agent_words::agent_cost(event))
        .filter(|_| of_hop_id.is_some())
        .map(|usd| agent_words::cost_check(usd, tracer_cost));
    AgentEventEntry {
        id: placed.stored.id,
        name: event.name.clone(),
        signal: event.signal.as_str().to_string(),
        agent: agent_words::agent_name(event),
        at_unix_ns: event.time_unix_ns,
        after_message,
        after_hop_id: after_hop.cloned(),
        of_hop_id,
        rule: placed.rule.as_str().to_string(),
        sentence: agent_words::sentence(event),
        cost_check,
        attributes: event.attributes(),
    }
}

/// Entries as rows of `agent_events` again (a hop log's import): each event rebuilt from its
/// name, time and attributes, its keys read from them.
pub(super) fn to_store(
    entries: &[AgentEventEntry],
) -> Vec<tracer_store::agent_events::NewAgentEvent> {
    let now = tracer_wire::hop::now_unix_ns();
    (entries.iter())
        .map(|entry| {
            let service = match entry.agent.as_str() {
                "Claude Code" => "claude-code".to_string(),
                "Codex" => "codex".to_string(),
                "Gemini CLI" => "gemini-cli".to_string(),
                other => other.to_string(),
            };
            let mut event = tracer_wire::agent_event::AgentEvent::from_attributes(
                &service,
                &entry.name,
                entry.at_unix_ns,
                &entry.attributes,
            );
            if let Some(signal) = tracer_wire::agent_event::Signal::parse(&entry.signal) {
                event.signal = signal;
            }
            let record_bytes = event.record.to_string().len();
            tracer_store::agent_events::NewAgentEvent {
                event,
                received_unix_ns: now,
                run_id: None,
                record_bytes,
                cut: false,
            }
        })
        .collect()
}
