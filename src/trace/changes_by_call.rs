//! What changed since the previous request of its conversation, for every model call of a trace:
//! the facts `show --changes` prints, shared by the TUI and the html handout.

use super::RecordedHop;
use super::conversation_pairs::{model_calls, request_json};
use super::request_changes::{Change, request_changes};
use crate::wire::dialect::HopReading;

/// One model call's changes against the previous request of its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallChanges {
    pub hop_id: String,
    /// The previous request's hop; `None` for the first request of its conversation.
    pub previous_hop_id: Option<String>,
    /// `None` when either body is not JSON; empty when only the cache marks moved.
    pub changes: Option<Vec<Change>>,
    /// The request body's bytes.
    pub body_bytes: usize,
}

impl CallChanges {
    /// The lines shown under the call (without the request numbers `show --changes` adds).
    pub fn lines(&self) -> Vec<String> {
        if self.previous_hop_id.is_none() {
            return vec!["the first request of its conversation".to_string()];
        }
        match &self.changes {
            None => vec!["a body is not JSON".to_string()],
            Some(changes) if changes.is_empty() => {
                vec!["nothing changed but where the cache marks sit".to_string()]
            }
            Some(changes) => changes.iter().map(|c| c.0.clone()).collect(),
        }
    }
}

/// Every model call's changes, in the order sent.
pub fn changes_by_call(hops: &[RecordedHop]) -> Vec<CallChanges> {
    changes_by_call_with(hops, request_json)
}

/// Every model call's changes, each request's JSON body given by `request_json` (for hops
/// whose bodies were let go of once read: fetched back, one or two at a time).
pub fn changes_by_call_with(
    hops: &[RecordedHop],
    request_json: impl Fn(&RecordedHop) -> Option<serde_json::Value>,
) -> Vec<CallChanges> {
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let calls = model_calls(hops, &readings);
    calls
        .iter()
        .map(|call| {
            let body = request_json(&hops[call.index]);
            let size = body.as_ref().map_or(0, |b| b.to_string().len());
            let previous = call.previous.map(|p| calls[p].index);
            let changes = previous.and_then(|p| {
                let (was, is) = (request_json(&hops[p])?, body.as_ref()?);
                Some(request_changes(&was, is))
            });
            CallChanges {
                hop_id: hops[call.index].start.id.clone(),
                previous_hop_id: previous.map(|p| hops[p].start.id.clone()),
                changes,
                body_bytes: call.request.body_bytes.max(size),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hop::{BodyCapture, HopEnd, HopStart, HopState, Role, Transport};

    fn model_hop(id: &str, at: i64, request: &[u8]) -> RecordedHop {
        RecordedHop {
            read: Default::default(),
            start: HopStart {
                id: id.into(),
                route: "model".into(),
                role: Role::Model,
                transport: Transport::Http,
                peer: "127.0.0.1:1".into(),
                method: "POST".into(),
                path: "/v1/messages".into(),
                url: "https://api.anthropic.com/v1/messages".into(),
                request_headers: Vec::new(),
                started_unix_ns: at,
            },
            end: Some(HopEnd {
                id: id.into(),
                state: Some(HopState::Complete),
                status: Some(200),
                request_body: BodyCapture::whole(request.to_vec()),
                ..HopEnd::default()
            }),
        }
    }

    #[test]
    fn claude_codes_second_request_is_compared_with_its_first() {
        let hops = [
            model_hop(
                "b",
                2,
                include_bytes!("../../tests/fixtures/agents/claude-code/turn2_request.json"),
            ),
            model_hop(
                "a",
                1,
                include_bytes!("../../tests/fixtures/agents/claude-code/turn1_request.json"),
            ),
        ];
        let calls = changes_by_call(&hops);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].hop_id, "a");
        assert_eq!(calls[0].lines(), ["the first request of its conversation"]);
        assert_eq!(calls[1].previous_hop_id.as_deref(), Some("a"));
        assert_eq!(calls[1].lines(), ["messages 3-4 added"]);
    }
}
