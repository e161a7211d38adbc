//! The lanes of a trace's sequence diagram (You, Agent, Model, then each MCP server and other
//! route by name) and, per numbered message, its arrow between two lanes and how it went. Shared
//! by the TUI's diagram and the HTML handout.

use super::{Case, Direction, ExplainedMessage, RecordedHop};
use crate::hop::{HopState, Role};

/// How a message went, for drawing its arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Normal,
    /// No answer, an HTTP error, a protocol error, or a tool error (`isError`).
    Failed,
    InFlight,
}

/// One arrow: from which lane to which, and how it went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrow {
    pub from: usize,
    pub to: usize,
    pub tone: Tone,
}

/// The lane names, left to right, and one arrow per message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lanes {
    pub names: Vec<String>,
    pub arrows: Vec<Arrow>,
}

fn lane_of(role: Role, route: &str) -> String {
    match role {
        Role::Agent => "Agent".to_string(),
        Role::Model => "Model".to_string(),
        Role::Mcp | Role::Other => route.to_string(),
    }
}

fn caller_of(role: Role) -> &'static str {
    match role {
        Role::Agent => "You",
        _ => "Agent",
    }
}

fn lane_rank(role: Role) -> usize {
    match role {
        Role::Agent => 1,
        Role::Model => 2,
        Role::Mcp | Role::Other => 3,
    }
}

/// The lanes of explained messages (`explain_trace(hops)`) and their arrows.
pub fn lanes(hops: &[RecordedHop], messages: &[ExplainedMessage]) -> Lanes {
    let mut names: Vec<String> = Vec::new();
    // Lanes in a fixed order of kinds, each kind in order of first appearance.
    for rank in 0..4 {
        for message in messages {
            let hop = &hops[message.hop_index];
            let role = hop.start.role;
            for (name, name_rank) in [
                (
                    caller_of(role).to_string(),
                    if role == Role::Agent { 0 } else { 1 },
                ),
                (lane_of(role, &hop.start.route), lane_rank(role)),
            ] {
                if name_rank == rank && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    let index = |name: &str| names.iter().position(|l| l == name).unwrap_or(0);
    let arrows = messages
        .iter()
        .map(|message| {
            let hop = &hops[message.hop_index];
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
    Lanes { names, arrows }
}

/// How one message went.
pub fn tone(message: &ExplainedMessage, hop: &RecordedHop) -> Tone {
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
