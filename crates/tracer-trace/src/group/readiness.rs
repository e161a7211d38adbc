//! When a hop can be decided: the evidence its decision reads, and what unfinished hops still owe.
//!
//! Live grouping sees hops before they have ended. A decision made while the evidence it reads
//! is still on its way (an agent's request body, a model answer naming the tool calls it asked
//! for, an MCP result) would stand on timing, not evidence, and differ from a replay of the
//! finished hops. So a hop waits, in start order, while an earlier hop still owes evidence of a
//! kind its decision reads, and for at most `GroupOptions::hold_ns` after that hop started.

use super::evidence::TraceInput;
use tracer_wire::hop::Role;

/// A set of kinds of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Evidence(u8);

impl Evidence {
    pub(crate) const NONE: Evidence = Evidence(0);
    /// The user's text in an agent hop's request body.
    pub(crate) const AGENT_TEXT: Evidence = Evidence(1);
    /// The tool calls a model answer asked for.
    pub(crate) const MODEL_ANSWER: Evidence = Evidence(2);
    /// An MCP result's text.
    pub(crate) const MCP_RESULT: Evidence = Evidence(4);
    /// When a hop ended (what placement by time reads).
    pub(crate) const SPAN: Evidence = Evidence(8);
    pub(crate) const ALL: Evidence = Evidence(15);

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn meets(self, other: Evidence) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for Evidence {
    type Output = Evidence;
    fn bitor(self, other: Evidence) -> Evidence {
        Evidence(self.0 | other.0)
    }
}

impl std::ops::BitOrAssign for Evidence {
    fn bitor_assign(&mut self, other: Evidence) {
        self.0 |= other.0;
    }
}

/// The evidence the grouper reads to decide this hop (whose request has been read).
pub fn needs(input: &TraceInput) -> Evidence {
    if input.trace_id.is_some() || input.role == Some(Role::Agent) {
        // A traceparent decides alone; an agent hop opens its own trace.
        return Evidence::NONE;
    }
    let mut needs = Evidence::NONE;
    if input.latest_user_text.is_some() || !input.user_texts.is_empty() {
        needs |= Evidence::AGENT_TEXT;
    }
    if !input.history_calls.is_empty() || input.mcp_call.is_some() {
        needs |= Evidence::MODEL_ANSWER;
    }
    if !input.tool_results.is_empty() {
        needs |= Evidence::MCP_RESULT;
    }
    if needs.is_empty() {
        // No content evidence: placed by discovery or time, which read everything.
        Evidence::ALL
    } else {
        needs
    }
}

/// What a hop already given a trace still owes later decisions while it is unfinished.
pub fn owes(input: &TraceInput, request_read: bool) -> Evidence {
    if input.role == Some(Role::Agent) {
        // An agent hop spans its whole user request; only its text is evidence to wait for.
        return if request_read {
            Evidence::NONE
        } else {
            Evidence::AGENT_TEXT
        };
    }
    if input.ended_ns.is_some() || input.standing_stream {
        return Evidence::NONE;
    }
    match input.role {
        Some(Role::Model) => Evidence::MODEL_ANSWER | Evidence::SPAN,
        Some(Role::Mcp) => Evidence::MCP_RESULT | Evidence::SPAN,
        _ => Evidence::SPAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::evidence::CallKey;

    fn input(role: Role) -> TraceInput {
        TraceInput {
            role: Some(role),
            ..TraceInput::default()
        }
    }

    #[test]
    fn each_kind_of_hop_needs_the_evidence_its_decision_reads() {
        assert_eq!(needs(&input(Role::Agent)), Evidence::NONE);
        let traced = TraceInput {
            trace_id: Some("0af7651916cd43dd8448eb211c80319c".into()),
            ..input(Role::Mcp)
        };
        assert_eq!(needs(&traced), Evidence::NONE);
        let fresh = TraceInput {
            latest_user_text: Some("Add milk".into()),
            ..input(Role::Model)
        };
        assert_eq!(needs(&fresh), Evidence::AGENT_TEXT);
        let call = TraceInput {
            mcp_call: Some(CallKey::new("append", serde_json::json!({}))),
            ..input(Role::Mcp)
        };
        assert_eq!(needs(&call), Evidence::MODEL_ANSWER);
        let later = TraceInput {
            tool_results: vec!["Success".into()],
            ..fresh.clone()
        };
        assert_eq!(needs(&later), Evidence::AGENT_TEXT | Evidence::MCP_RESULT);
        let discovery = TraceInput {
            mcp_method: Some("tools/list".into()),
            ..input(Role::Mcp)
        };
        assert_eq!(needs(&discovery), Evidence::ALL);
    }

    #[test]
    fn unfinished_hops_owe_what_their_end_will_tell() {
        assert_eq!(owes(&input(Role::Agent), false), Evidence::AGENT_TEXT);
        assert_eq!(owes(&input(Role::Agent), true), Evidence::NONE);
        let model = owes(&input(Role::Model), true);
        assert!(model.meets(Evidence::MODEL_ANSWER) && !model.meets(Evidence::AGENT_TEXT));
        assert!(owes(&input(Role::Mcp), true).meets(Evidence::MCP_RESULT));
        let ended = TraceInput {
            ended_ns: Some(1),
            ..input(Role::Model)
        };
        assert_eq!(owes(&ended, true), Evidence::NONE);
    }
}
