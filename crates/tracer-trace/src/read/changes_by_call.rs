//! What changed since the previous request of its conversation, for every model call of a trace:
//! the facts `show --changes` prints, shared by the TUI and the html handout.

use super::conversation_pairs::{model_calls, request_json};
use crate::RecordedHop;
use std::collections::VecDeque;
use std::rc::Rc;

use super::prompt_regions::PromptRegions;
use super::request_changes::{Change, changes_between, changes_by_digest};
use tracer_wire::dialect::HopReading;

/// One model call's changes against the previous request of its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallChanges {
    pub hop_id: String,
    /// The previous request's hop; `None` for the first request of its conversation.
    pub previous_hop_id: Option<String>,
    /// `None` when either body is not JSON; empty when the two requests are the same, cache
    /// marks and all (a resend).
    pub changes: Option<Vec<Change>>,
    /// The request body's bytes.
    pub body_bytes: usize,
}

impl CallChanges {
    /// The lines shown under the call (without the request numbers `show --changes` adds);
    /// `previous` is the number of the previous request's message, when known.
    pub fn lines(&self, previous: Option<usize>) -> Vec<String> {
        if self.previous_hop_id.is_none() {
            return vec!["the first request of its conversation".to_string()];
        }
        match &self.changes {
            None => vec!["a body is not JSON".to_string()],
            Some(changes) if changes.is_empty() => vec![identical_line(previous)],
            Some(changes) => changes.iter().map(|c| c.0.clone()).collect(),
        }
    }
}

/// The line for a request sent again as it was: `identical to request 3: a retry?`.
pub(crate) fn identical_line(previous: Option<usize>) -> String {
    match previous {
        Some(number) => format!("identical to request {number}: a retry?"),
        None => "identical to the previous request: a retry?".to_string(),
    }
}

/// Every model call's changes, in the order sent.
pub fn changes_by_call(hops: &[RecordedHop]) -> Vec<CallChanges> {
    changes_by_call_with(hops, request_json)
}

/// Every model call's changes, each request's JSON body given by `request_json` (for hops
/// whose bodies were let go of once read: fetched back, one or two at a time). Each body is
/// asked for and taken apart once while the calls that compare with it are near: the last
/// [`HELD`] are held.
pub fn changes_by_call_with(
    hops: &[RecordedHop],
    request_json: impl Fn(&RecordedHop) -> Option<serde_json::Value>,
) -> Vec<CallChanges> {
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let calls = model_calls(hops, &readings);
    let mut held: VecDeque<(usize, Option<Rc<Taken>>)> = VecDeque::with_capacity(HELD + 1);
    let mut take = |index: usize| -> Option<Rc<Taken>> {
        if let Some((_, taken)) = held.iter().find(|(i, _)| *i == index) {
            return taken.clone();
        }
        let taken = request_json(&hops[index]).map(|json| {
            let regions = PromptRegions::of(&json);
            Rc::new(Taken { json, regions })
        });
        held.push_back((index, taken.clone()));
        if held.len() > HELD {
            held.pop_front();
        }
        taken
    };
    let mut out = Vec::with_capacity(calls.len());
    for call in &calls {
        let previous = call.previous.map(|p| calls[p].index);
        // The digests the readings keep tell most changes (messages added) without a body.
        let by_digest = previous.and_then(|p| {
            let (was, is) = (hops[p].request_parts()?, hops[call.index].request_parts()?);
            changes_by_digest(&was, &is)
        });
        if let (Some(p), Some(changes)) = (previous, by_digest) {
            out.push(CallChanges {
                hop_id: hops[call.index].start.id.clone(),
                previous_hop_id: Some(hops[p].start.id.clone()),
                changes: Some(changes),
                body_bytes: call.request.body_bytes,
            });
            continue;
        }
        let was = previous.and_then(&mut take);
        let body = take(call.index);
        // The reading knows the body's size; one read from no body (or none) is measured.
        let size = match (call.request.body_bytes, &body) {
            (0, Some(body)) => body.json.to_string().len(),
            (bytes, _) => bytes,
        };
        let changes = match (&was, &body) {
            (Some(was), Some(is)) => Some(changes_between(
                (&was.json, &was.regions),
                (&is.json, &is.regions),
            )),
            _ => None,
        };
        out.push(CallChanges {
            hop_id: hops[call.index].start.id.clone(),
            previous_hop_id: previous.map(|p| hops[p].start.id.clone()),
            changes,
            body_bytes: size,
        });
    }
    out
}

/// Request bodies held while the calls near them are compared: a conversation's requests
/// interleave with a few side requests (titles, routing) at most.
const HELD: usize = 4;

/// A request body taken apart for comparing.
struct Taken {
    json: serde_json::Value,
    regions: PromptRegions,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::request_changes::{CLAUDE_CODES_SECOND_REQUEST, MARKS_ONLY, request_changes};
    use tracer_wire::hop::{BodyCapture, HopEnd, HopStart, HopState, Role, Transport};

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
                run_id: None,
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
                include_bytes!("../../../../tests/fixtures/agents/claude-code/turn2_request.json"),
            ),
            model_hop(
                "a",
                1,
                include_bytes!("../../../../tests/fixtures/agents/claude-code/turn1_request.json"),
            ),
        ];
        let calls = changes_by_call(&hops);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].hop_id, "a");
        assert_eq!(
            calls[0].lines(None),
            ["the first request of its conversation"]
        );
        assert_eq!(calls[1].previous_hop_id.as_deref(), Some("a"));
        assert_eq!(calls[1].lines(Some(1)), CLAUDE_CODES_SECOND_REQUEST);
    }

    /// Each request of a conversation that changes in one way, from the first.
    fn edited_session() -> Vec<serde_json::Value> {
        use serde_json::json;
        let tool = |name: &str, text: &str| {
            json!({"name": name, "description": text,
            "input_schema": {"type": "object"}})
        };
        let user = |text: &str| json!({"role": "user", "content": text});
        let first = json!({"model": "m", "max_tokens": 100, "stream": true,
            "system": [{"type": "text", "text": "you help", "cache_control": {"type": "ephemeral"}}],
            "tools": [tool("read", "reads"), tool("write", "writes")],
            "messages": [user("hi")]});
        let mut bodies = vec![first];
        let mut next = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut body = bodies.last().cloned().unwrap();
            edit(&mut body);
            bodies.push(body);
        };
        next(&|b| b["messages"].as_array_mut().unwrap().push(user("more")));
        next(&|b| {
            b["messages"].as_array_mut().unwrap().push(user("a"));
            b["messages"].as_array_mut().unwrap().push(user("b"));
        });
        // Only a cache mark moves.
        next(&|b| b["system"][0]["cache_control"] = json!({"type": "ephemeral", "ttl": "1h"}));
        next(&|b| b["max_tokens"] = json!(200));
        next(&|b| {
            b["tools"]
                .as_array_mut()
                .unwrap()
                .push(tool("grep", "finds"))
        });
        next(&|b| {
            b["tools"].as_array_mut().unwrap().remove(0);
        });
        next(&|b| b["tools"][0]["description"] = json!("writes files"));
        next(&|b| b["system"][0]["text"] = json!("you help, briefly"));
        next(&|b| b["messages"][1]["content"] = json!("more, please"));
        next(&|b| b["temperature"] = json!(0.5));
        bodies
    }

    #[test]
    fn changes_told_by_the_digests_are_the_ones_the_bodies_tell() {
        let bodies = edited_session();
        let hops: Vec<RecordedHop> = (bodies.iter().enumerate())
            .map(|(i, body)| model_hop(&format!("h{i}"), i as i64, body.to_string().as_bytes()))
            .collect();
        let calls = changes_by_call(&hops);
        assert_eq!(calls.len(), bodies.len());
        for (i, call) in calls.iter().enumerate().skip(1) {
            assert_eq!(
                call.previous_hop_id,
                Some(format!("h{}", i - 1)),
                "request {i}"
            );
            let expected = request_changes(&bodies[i - 1], &bodies[i]);
            assert_eq!(call.changes.as_ref(), Some(&expected), "request {i}");
            assert_eq!(call.body_bytes, bodies[i].to_string().len());
        }
        // And the digests alone told the ones they can: added, removed, marks moved.
        let parts = |i: usize| hops[i].request_parts().unwrap();
        let by_digest = |i: usize| {
            let (was, is) = (parts(i - 1), parts(i));
            changes_by_digest(&was, &is)
        };
        assert_eq!(
            texts(by_digest(1)),
            ["message 2 added: user, text: \"more\""]
        );
        assert_eq!(
            texts(by_digest(2)),
            [
                "message 3 added: user, text: \"a\"",
                "message 4 added: user, text: \"b\""
            ]
        );
        assert_eq!(texts(by_digest(3)), [MARKS_ONLY]);
        assert_eq!(by_digest(4), None, "a parameter's words need the bodies");
        assert_eq!(texts(by_digest(5)), ["tool grep added"]);
        assert_eq!(texts(by_digest(6)), ["tool read removed"]);
        assert_eq!(by_digest(7), None);
        assert_eq!(by_digest(8), None);
        assert_eq!(by_digest(9), None);
        assert_eq!(by_digest(10), None);
    }

    #[test]
    fn a_resend_is_identical_and_many_messages_added_name_the_last_eight() {
        use serde_json::json;
        let user = |text: &str| json!({"role": "user", "content": text});
        let first = json!({"model": "m", "messages": [user("hi")]});
        let mut long = first.clone();
        for i in 0..11 {
            long["messages"]
                .as_array_mut()
                .unwrap()
                .push(user(&format!("line {i}")));
        }
        let bodies = [first.clone(), first, long];
        let hops: Vec<RecordedHop> = (bodies.iter().enumerate())
            .map(|(i, body)| model_hop(&format!("h{i}"), i as i64, body.to_string().as_bytes()))
            .collect();
        let calls = changes_by_call(&hops);
        assert_eq!(calls[1].changes, Some(Vec::new()));
        assert_eq!(
            calls[1].lines(Some(1)),
            ["identical to request 1: a retry?"]
        );
        let mut expected = vec!["messages 2-4 added".to_string()];
        expected
            .extend((5..=12).map(|n| format!("message {n} added: user, text: \"line {}\"", n - 2)));
        assert_eq!(calls[2].lines(Some(3)), expected);
        // The digests told both, and the bodies tell the same.
        let parts = |i: usize| hops[i].request_parts().unwrap();
        assert_eq!(changes_by_digest(&parts(0), &parts(1)), Some(Vec::new()));
        assert_eq!(texts(changes_by_digest(&parts(1), &parts(2))), expected);
        assert_eq!(
            request_changes(&bodies[1], &bodies[2]),
            expected.into_iter().map(Change).collect::<Vec<_>>()
        );
        // Removed from the end: the earlier request's last messages, named.
        let removed = texts(Some(request_changes(&bodies[2], &bodies[0])));
        assert_eq!(removed[0], "messages 2-4 removed");
        assert_eq!(removed[8], "message 12 removed: user, text: \"line 10\"");
    }

    fn texts(changes: Option<Vec<Change>>) -> Vec<String> {
        changes.unwrap().into_iter().map(|c| c.0).collect()
    }
}
