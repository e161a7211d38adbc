//! Explanations for hosts in a model API's shape (open-webui): your request to the host, its
//! answer to you, its tool-selection call and the conversation it rewrote (`host_patterns`), its
//! own housekeeping (`side_calls::housekeeping_of`).

use serde_json::Value;

use crate::RecordedHop;
use crate::read::explain_context::ExplainContext;
use crate::read::host_patterns::{pasted_outputs, selection_tools};
use crate::{explain::Case, explain::Explained, words::shorten};
use tracer_wire::dialect::{ModelRequest, ModelResponse};
use tracer_wire::hop::Role;

/// How long a quoted text may be in a summary line.
const QUOTE: usize = 72;

/// Whether a hop is your request to the host (an agent route), whatever shape its body has.
pub(crate) fn to_the_host(hop: &RecordedHop) -> bool {
    hop.start.role == Role::Agent
}

/// Your request to the host, in a model API's shape: the user's words and the host's own tool
/// ids (open-webui's `tool_ids`).
pub(crate) fn host_request(hop: &RecordedHop, request: &ModelRequest) -> Explained {
    let text = request.latest_user_text().unwrap_or_default();
    let tool_ids: Vec<String> = hop
        .end
        .as_ref()
        .and_then(|end| serde_json::from_slice::<Value>(&end.request_body.bytes).ok())
        .and_then(|body| body.get("tool_ids").cloned())
        .and_then(|ids| ids.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|id| id.as_str().map(str::to_string))
        .collect();
    let (ids, words) = if tool_ids.is_empty() {
        (String::new(), String::new())
    } else {
        let list = tool_ids.join(", ");
        (
            format!(", tool ids {list}"),
            format!(" (you named its tool servers: {list})"),
        )
    };
    let mut explained = Explained::new(
        Case::HostModelRequest,
        &[
            ("text", shorten(text, QUOTE)),
            ("tool_ids", ids),
            ("tool_words", words),
        ],
    );
    if request.stream {
        explained.note(Case::NoteStreamRequested, &[]);
    }
    explained
}

/// The host's answer to you, in a model API's shape.
pub(crate) fn host_reply(reply: &ModelResponse) -> Explained {
    Explained::new(
        Case::AgentReply,
        &[
            ("text", shorten(&reply.message.content, QUOTE)),
            ("calls", String::new()),
            ("tool_calls", "the tool calls above".to_string()),
        ],
    )
}

/// On a host's housekeeping request (`side_calls::housekeeping_of`), what it does.
pub(crate) fn housekeeping_note(hop: &RecordedHop, explained: &mut Explained) {
    if let Some(what) = crate::read::side_calls::housekeeping_of(&hop.start) {
        explained.note(Case::NoteHousekeeping, &[("what", what.to_string())]);
    }
}

/// Notes on a model request the host made: a tool-selection call, a rewritten conversation.
pub(crate) fn host_notes(
    explained: &mut Explained,
    request: &ModelRequest,
    context: &ExplainContext,
) {
    if let Some(tools) = selection_tools(request) {
        let listed = if tools.is_empty() {
            "none listed".to_string()
        } else {
            tools.join(", ")
        };
        explained.note(Case::NoteToolSelection, &[("tools", listed)]);
        return;
    }
    let pasted = pasted_outputs(request, &context.tool_outputs);
    if pasted.is_empty() {
        return;
    }
    let words: Vec<String> = pasted
        .iter()
        .map(|p| match &p.label {
            Some(label) => format!("{:?} as <source name=\"{label}\">", p.text),
            None => format!("{:?}", p.text),
        })
        .collect();
    explained.note(Case::NoteHistoryRewritten, &[("pasted", words.join(", "))]);
}
