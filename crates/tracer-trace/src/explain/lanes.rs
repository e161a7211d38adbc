//! The lanes of a trace's sequence diagram (you, each host, each model server, then each tool
//! and MCP server, all by route name) and, per numbered message, its arrow between two lanes and how it went. Shared
//! by the TUI's diagram and the HTML handout.

use crate::explain::McpCase;
use crate::{Case, Direction, ExplainedMessage, RecordedHop};
use tracer_wire::hop::{HopState, Role};

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

/// Where a lane stands, left to right: you, then hosts (agent routes, and callers tracer does
/// not front), then model servers, then tool servers and MCP servers.
fn lane_rank(role: Role) -> usize {
    match role {
        Role::Agent => 1,
        Role::Model => 2,
        Role::Mcp | Role::Other => 3,
    }
}

/// The lanes of explained messages (`explain_trace(hops)`) and their arrows: one lane per
/// caller and upstream, named by route (`ExplainedMessage::from`, `to`).
pub fn lanes(hops: &[RecordedHop], messages: &[ExplainedMessage]) -> Lanes {
    // Each name's rank: an upstream's by its route's role; a caller seen only as a caller is a
    // host (1), `you` is first (0).
    let mut ranked: Vec<(String, usize)> = Vec::new();
    for message in messages {
        let role = hops[message.hop_index].start.role;
        let (caller, upstream) = match message.direction {
            Direction::Request => (&message.from, &message.to),
            Direction::Response => (&message.to, &message.from),
        };
        match ranked.iter_mut().find(|(name, _)| name == upstream) {
            Some((_, rank)) => *rank = lane_rank(role),
            None => ranked.push((upstream.clone(), lane_rank(role))),
        }
        if !ranked.iter().any(|(name, _)| name == caller) {
            let rank = if caller == "you" { 0 } else { 1 };
            ranked.push((caller.clone(), rank));
        }
    }
    let mut names: Vec<String> = Vec::new();
    for rank in 0..4 {
        for (name, _) in ranked.iter().filter(|(_, r)| *r == rank) {
            names.push(name.clone());
        }
    }
    let index = |name: &str| names.iter().position(|l| l == name).unwrap_or(0);
    let arrows = messages
        .iter()
        .map(|message| Arrow {
            from: index(&message.from),
            to: index(&message.to),
            tone: tone(message, &hops[message.hop_index]),
        })
        .collect();
    Lanes { names, arrows }
}

/// How one message went.
pub(crate) fn tone(message: &ExplainedMessage, hop: &RecordedHop) -> Tone {
    let failed_case = matches!(
        message.case,
        Case::Failed
            | Case::CutOff
            | Case::Aborted
            | Case::McpProtocolError
            | Case::McpToolError
            | Case::AgentError
            | Case::ModelError
            | Case::Mcp(McpCase::RestRefused | McpCase::RestError)
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
