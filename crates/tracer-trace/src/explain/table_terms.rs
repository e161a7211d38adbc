//! The table's rows for each API in its own terms (Anthropic's `tool_use` / `tool_result`
//! blocks, the Responses API's items), thinking, and what a model request carries.

use super::table::row;
use super::{Case, CaseText};

/// The rows of the cases named in each API's own terms.
pub(crate) const TERMS: &[CaseText] = &[
    row(
        Case::WordsToolUse,
        "words_tool_use",
        "the model {said}asks for tool {calls} (it does not run it: the host will)",
        "The model answered with a tool_use block: the tool's name, its input as JSON and an id. The model runs nothing; the host decides whether to run the tool, and sends back what came of it as a tool_result block with the same id, inside its next user message.",
    ),
    row(
        Case::WordsFunctionCall,
        "words_function_call",
        "the model {said}asks for tool {calls} (it does not run it: the host will)",
        "The model answered with a function_call item: the function's name, its arguments as JSON text and a call_id. The model runs nothing; the host decides whether to run it, and sends back what came of it as a function_call_output item with the same call_id.",
    ),
    row(
        Case::NoteTextBeforeCall,
        "note_text_before_call",
        "",
        "Before the call it wrote, for the user: \"{text}\".",
    ),
    row(
        Case::NoteThinking,
        "note_thinking",
        "",
        "First it thought, in {place}: \"{text}\".",
    ),
    row(
        Case::NoteThinkingSigned,
        "note_thinking_signed",
        "",
        "The thinking is signed, {bytes} bytes: the host sends it back unchanged with the rest of the conversation, and the API checks the signature.",
    ),
    row(
        Case::NoteHiddenReasoning,
        "note_hidden_reasoning",
        "",
        "It also reasoned in a form only the API can read ({what}, {bytes} bytes); the host passes it back as it came.",
    ),
    row(
        Case::NoteSystemPrompt,
        "note_system_prompt",
        "",
        "Its system prompt is {parts}: {bytes} in all.",
    ),
    row(
        Case::NoteCacheMarks,
        "note_cache_marks",
        "",
        "{marks} ask the API to cache the prompt up to each mark, so the next request can read that part back instead of paying for it again.",
    ),
    row(
        Case::NoteToolsOffered,
        "note_tools_offered",
        "",
        "It offers {total}{size}: {origins}.",
    ),
    row(
        Case::NoteNewSince,
        "note_new_since",
        "",
        "New since the previous request of this conversation: {new}.",
    ),
    row(
        Case::NoteThinkingMode,
        "note_thinking_mode",
        "",
        "It sets how the model thinks: {mode}.",
    ),
    row(
        Case::NoteAdaptiveThinking,
        "note_adaptive_thinking",
        "",
        "With thinking {type: adaptive} the model itself decides whether, and how long, to think before it answers.",
    ),
    row(
        Case::NoteHandoffToolMessage,
        "note_handoff_tool_message",
        "",
        "The host will paste this text into the conversation as a role: tool message for the model.",
    ),
    row(
        Case::NoteHandoffToolResult,
        "note_handoff_tool_result",
        "",
        "The host will send this text back to the model as a tool_result block inside its next user message.",
    ),
    row(
        Case::NoteHandoffToolResultError,
        "note_handoff_tool_result_error",
        "",
        "The host sends it back to the model as a tool_result block with is_error: true.",
    ),
    row(
        Case::NoteHandoffFunctionOutput,
        "note_handoff_function_output",
        "",
        "The host will send this text back to the model as a function_call_output item in its next request.",
    ),
];
