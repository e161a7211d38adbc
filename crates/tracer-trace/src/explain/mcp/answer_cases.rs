//! The table's MCP rows for answers: each paired with the request it answers, the host's
//! answers to the server's requests, and the errors that are not the request's fault.

use super::cases::{McpCase, mcp};
use crate::explain::CaseText;

/// The rows of the MCP cases an answer is.
pub(crate) const MCP_ANSWERS: &[CaseText] = &[
    mcp(
        McpCase::Pong,
        "mcp_pong",
        "pong (to {number})",
        "The answer to the ping: an empty result means the other side is there.",
    ),
    mcp(
        McpCase::TaskCreated,
        "mcp_task_created",
        "task {task} created ({status})",
        "The server took the call as a task and answers with its id instead of the outcome; the host asks tasks/get how it goes and tasks/result for what came of it.",
    ),
    mcp(
        McpCase::ToolResultRich,
        "mcp_tool_result_rich",
        "result: {content}",
        "The tool ran. {detail}",
    ),
    mcp(
        McpCase::ResourcesListResult,
        "mcp_resources_list_result",
        "{count}: {names}",
        "The server names its resources, each with a URI the host can read.",
    ),
    mcp(
        McpCase::TemplatesListResult,
        "mcp_templates_list_result",
        "{count}: {names}",
        "The server names the URI patterns it can fill in.",
    ),
    mcp(
        McpCase::ResourceReadResult,
        "mcp_resource_read_result",
        "{content}",
        "The server gives the resource's contents: text as it is, binary data as base64 (shown here by its size only).",
    ),
    mcp(
        McpCase::PromptsListResult,
        "mcp_prompts_list_result",
        "{count}: {names}",
        "The server names its prompts and their arguments.",
    ),
    mcp(
        McpCase::PromptGetResult,
        "mcp_prompt_get_result",
        "{count}: {messages}",
        "The server gives the prompt's messages, ready for the host to put into a conversation.",
    ),
    mcp(
        McpCase::CompleteResult,
        "mcp_complete_result",
        "{count}: {values}",
        "The server suggests values for the argument.",
    ),
    mcp(
        McpCase::TaskStatusResult,
        "mcp_task_status_result",
        "task {task}: {status}{message}",
        "The server says where the task stands.",
    ),
    mcp(
        McpCase::TasksListResult,
        "mcp_tasks_list_result",
        "{count}: {names}",
        "The server lists the tasks and their states.",
    ),
    mcp(
        McpCase::SamplingAnswer,
        "mcp_sampling_answer",
        "the host's model wrote: \"{text}\" ({model})",
        "The host answers the server's sampling request ({number}) with what its model wrote.",
    ),
    mcp(
        McpCase::ElicitAnswer,
        "mcp_elicit_answer",
        "the user {action}{content}",
        "The host answers the server's elicitation ({number}) with what the user did.",
    ),
    mcp(
        McpCase::RootsAnswer,
        "mcp_roots_answer",
        "{count}: {names}",
        "The host answers the server's roots request ({number}) with the roots it shares.",
    ),
    mcp(
        McpCase::EmptyResult,
        "mcp_empty_result",
        "done (to {number}, {method})",
        "An empty result: the request ({method}) was done and there is nothing to give back.",
    ),
    mcp(
        McpCase::AnswerToWithdrawn,
        "mcp_answer_to_withdrawn",
        "answers {number} after the host withdrew it in {cancel}",
        "An answer to request {number} ({method}), which the host had withdrawn in message {cancel}: the host drops it.",
    ),
    mcp(
        McpCase::ProgressAfterWithdrawn,
        "mcp_progress_after_withdrawn",
        "progress {progress}{total} on {number}{message}, after the host withdrew it in {cancel}",
        "The server still reports how far it is with request {number} ({method}), which the host withdrew in message {cancel}: the host ignores it. A server should stop work on a withdrawn request; this one had not yet.",
    ),
    mcp(
        McpCase::CancelledAfterAnswer,
        "mcp_cancelled_after_answer",
        "withdraws {number}, already answered in {answer}{reason}",
        "The host withdraws request {number} ({method}) after the server had answered it in message {answer}: nothing is left to stop, and the server ignores it. A notification: no answer.",
    ),
    mcp(
        McpCase::NoteWithdrawn,
        "mcp_note_withdrawn",
        " · withdrawn by the host in message {cancel}",
        "The host withdrew this request in message {cancel} (notifications/cancelled): the server should stop, and any answer it still sends is dropped.",
    ),
    mcp(
        McpCase::AnswerUnpaired,
        "mcp_answer_unpaired",
        "{detail}",
        "An answer to a request tracer did not see (id {id}).",
    ),
    mcp(
        McpCase::UrlElicitationRequired,
        "mcp_url_elicitation_required",
        "the user must first open {url} (-32042)",
        "Not a wrong request: the server needs the user sent to a URL first (error -32042, URL elicitation required). The host asks the user, and once it is done retries the same request.",
    ),
    mcp(
        McpCase::NoteAnswers,
        "mcp_note_answers",
        "",
        "It answers {number} ({method}).",
    ),
    mcp(
        McpCase::DiscoverUnsupported,
        "mcp_discover_unsupported",
        "no server/discover here ({code}): the host falls back to initialize",
        "The server does not know the stateless era's server/discover (it answered {code}: {message}): it speaks the handshake era, so the host starts again with initialize. Nothing is wrong.",
    ),
    mcp(
        McpCase::InitializeResultStdio,
        "mcp_initialize_result_stdio",
        "agreed on protocol {version}",
        "The server accepts the handshake: the session lasts as long as the server's process, and every later line on this pipe belongs to it.",
    ),
    mcp(
        McpCase::NoteSamplingModelCall,
        "mcp_note_sampling_model_call",
        "",
        "The host's model wrote it in call {call} (route {route}), recorded in this trace.",
    ),
];
