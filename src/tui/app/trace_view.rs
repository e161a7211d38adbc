//! The state of the trace view: one trace's hops, its numbered messages, the lanes of its
//! sequence diagram, the selected message and, when replaying, the replay.

use crate::hop::{HopState, Role};
use crate::replay::ReplayState;
use crate::replay::source::LoadedTrace;
use crate::trace::{Case, Direction, ExplainedMessage, RecordedHop, explain_trace};

/// How a message is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Normal,
    Failed,
    InFlight,
}

/// One arrow of the diagram: from which lane to which, and how it looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrow {
    pub from: usize,
    pub to: usize,
    pub tone: Tone,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TraceView {
    pub trace_id: String,
    pub title: Option<String>,
    pub hops: Vec<RecordedHop>,
    pub messages: Vec<ExplainedMessage>,
    /// Lane names, left to right: You, Agent, Model, then each MCP server and other route.
    pub lanes: Vec<String>,
    /// One per message.
    pub arrows: Vec<Arrow>,
    pub selected: usize,
    pub detail_scroll: u16,
    pub replay: Option<ReplayState>,
}

impl TraceView {
    pub fn new(trace: LoadedTrace) -> Self {
        let messages = explain_trace(&trace.hops);
        let mut lanes: Vec<String> = Vec::new();
        let lane_of = |role: Role, route: &str| match role {
            Role::Agent => "Agent".to_string(),
            Role::Model => "Model".to_string(),
            Role::Mcp | Role::Other => route.to_string(),
        };
        let caller_of = |role: Role| match role {
            Role::Agent => "You",
            _ => "Agent",
        };
        // Lanes in a fixed order of kinds, each kind in order of first appearance.
        for rank in 0..4 {
            for message in &messages {
                let hop = &trace.hops[message.hop_index];
                let role = hop.start.role;
                for (name, name_rank) in [
                    (
                        caller_of(role).to_string(),
                        if role == Role::Agent { 0 } else { 1 },
                    ),
                    (lane_of(role, &hop.start.route), lane_rank(role)),
                ] {
                    if name_rank == rank && !lanes.contains(&name) {
                        lanes.push(name);
                    }
                }
            }
        }
        let index = |name: &str| lanes.iter().position(|l| l == name).unwrap_or(0);
        let arrows = messages
            .iter()
            .map(|message| {
                let hop = &trace.hops[message.hop_index];
                let caller = index(caller_of(hop.start.role));
                let upstream = index(&lane_of(hop.start.role, &hop.start.route));
                let (from, to) = match message.direction {
                    Direction::Request => (caller, upstream),
                    Direction::Response => (upstream, caller),
                };
                Arrow {
                    from,
                    to,
                    tone: tone(message, hop),
                }
            })
            .collect();
        Self {
            trace_id: trace.trace_id,
            title: trace.title,
            hops: trace.hops,
            messages,
            lanes,
            arrows,
            selected: 0,
            detail_scroll: 0,
            replay: None,
        }
    }

    /// The same trace read again (live refresh): keeps the selection and the replay.
    pub fn refreshed(&self, trace: LoadedTrace) -> Self {
        let mut view = Self::new(trace);
        view.selected = self.selected.min(view.messages.len().saturating_sub(1));
        view.detail_scroll = self.detail_scroll;
        view.replay = self.replay.clone().map(|mut replay| {
            replay.total = view.messages.len();
            replay
        });
        view
    }

    /// How many messages are drawn: all of them, or up to the replay's step.
    pub fn shown(&self) -> usize {
        match &self.replay {
            Some(replay) => (replay.step + 1).min(self.messages.len()),
            None => self.messages.len(),
        }
    }

    /// The message whose details are shown.
    pub fn current(&self) -> Option<&ExplainedMessage> {
        let index = match &self.replay {
            Some(replay) => replay.step,
            None => self.selected,
        };
        self.messages.get(index)
    }

    pub fn times(&self) -> Vec<i64> {
        self.messages.iter().map(|m| m.at_unix_ns).collect()
    }

    pub fn has_in_flight(&self) -> bool {
        self.hops.iter().any(|hop| {
            hop.end
                .as_ref()
                .is_none_or(|end| end.state == Some(HopState::InFlight))
        })
    }

    pub fn select(&mut self, index: usize) {
        let index = index.min(self.messages.len().saturating_sub(1));
        if index != self.selected {
            self.selected = index;
            self.detail_scroll = 0;
        }
    }
}

fn lane_rank(role: Role) -> usize {
    match role {
        Role::Agent => 1,
        Role::Model => 2,
        Role::Mcp | Role::Other => 3,
    }
}

fn tone(message: &ExplainedMessage, hop: &RecordedHop) -> Tone {
    let failed_case = matches!(
        message.case,
        Case::Failed
            | Case::Aborted
            | Case::McpProtocolError
            | Case::McpToolError
            | Case::AgentError
            | Case::ModelError
    );
    let status = hop.end.as_ref().and_then(|e| e.status).unwrap_or(0);
    let in_flight = hop
        .end
        .as_ref()
        .is_none_or(|end| end.state == Some(HopState::InFlight));
    match message.direction {
        Direction::Request if in_flight => Tone::InFlight,
        Direction::Response if failed_case || status >= 400 => Tone::Failed,
        Direction::Response if message.case == Case::InFlight => Tone::InFlight,
        _ => Tone::Normal,
    }
}
