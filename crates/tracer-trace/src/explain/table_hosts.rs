//! The words for hosts that stand between you and the model in the model API's own shape
//! (open-webui's `/api/chat/completions`), pick tools in the prompt and rewrite the conversation.

use super::table::row;
use super::{Case, CaseText};

pub(crate) const HOSTS: &[CaseText] = &[
    row(
        Case::HostModelRequest,
        "host_model_request",
        "\"{text}\" to the host{tool_ids}",
        "You ask the host (the agent), not the model server: this body has a model API's shape, \
         but the host answers it. It adds its own prompts and the tools it chose{tool_words}, and \
         makes its own calls to the model server. Everything numbered after this, until the \
         reply, happens because of this one request.",
    ),
    row(
        Case::NoteToolSelection,
        "note_tool_selection",
        "",
        "This is the host's tool-selection call: it asks the model which tool to use. The tools \
         are described in the system prompt ({tools}), and 0 tools are offered in the API's own \
         field, so the model server does no function calling: the model is asked to answer with \
         JSON naming the tool and its arguments, which the host reads and runs itself.",
    ),
    row(
        Case::NoteHistoryRewritten,
        "note_history_rewritten",
        "",
        "The host rewrote the conversation rather than re-sending it: it pasted the tool output \
         into the prompt as context ({pasted}), around your question. No tool call and no tool \
         message appear in it; to the model the output is text the user sent.",
    ),
    row(
        Case::NoteHousekeeping,
        "note_housekeeping",
        "",
        "This is the host's own housekeeping ({what}), beside any conversation: no model is asked \
         anything here.",
    ),
    row(
        Case::AgentEndpoint,
        "agent_endpoint",
        "{agent}: {purpose}",
        "{agent}'s own call beside your request ({purpose}): no model is asked anything here. \
         The agent goes on without its answer, so when it fails your request does not: the \
         trace counts it as a failed side call, not as its status.",
    ),
];
