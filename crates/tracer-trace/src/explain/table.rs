//! The table of explanations: for every case, its name, its summary and its plain words.

use super::{Case, CaseText};

pub(crate) const fn row(
    case: Case,
    name: &'static str,
    summary: &'static str,
    explanation: &'static str,
) -> CaseText {
    CaseText {
        case,
        name,
        summary,
        explanation,
    }
}

/// The table: every case, what its one-line summary says and how it is explained to a newcomer.
pub(crate) const CASES: &[CaseText] = &[
    row(
        Case::AgentRequest,
        "agent_request",
        "\"{text}\"",
        "You ask the host (the agent) in plain words. Everything numbered after this, until the reply, happens because of this one request.",
    ),
    row(
        Case::AgentReply,
        "agent_reply",
        "reply: \"{text}\"{calls}",
        "The host answers you. The model wrote these words; the host ran the tools in between ({tool_calls}) and reports them.",
    ),
    row(
        Case::AgentError,
        "agent_error",
        "error: {error}",
        "The host could not finish your request; the message says why.",
    ),
    row(
        Case::ModelRequest,
        "model_request",
        "{model}, {messages}, {tools}",
        "The host sends the conversation and the tools it offers to the model server. The model remembers nothing between calls: this body is everything it will see.",
    ),
    row(
        Case::ModelRequestAgain,
        "model_request_again",
        "{model}, {messages} ({added} more than last time), {tools}",
        "The host re-sends the whole history: {count} messages now, {added} more than last time. The model is stateless; its \"memory\" is this list, kept by the host.",
    ),
    row(
        Case::ModelLoad,
        "model_load",
        "load {model} (no messages)",
        "An empty conversation asks the model server only to load the model into memory (or, with keep_alive 0, to unload it); nothing is generated.",
    ),
    row(
        Case::ModelToolCall,
        "model_tool_call",
        "the model {said}asks for tool {calls} (it does not run it: the host will)",
        "Function calling is the model side: the model wrote text asking for a tool and the model server parsed it into {call_form}. The model runs nothing; the host decides whether to call the tool.",
    ),
    row(
        Case::ModelTextToolCall,
        "model_text_tool_call",
        "the model writes a tool call as text: {calls}",
        "There is no tool_calls field: the model wrote the call inside its content ({form}). The model server did not parse it, so the host has to find and read it itself.",
    ),
    row(
        Case::ModelAnswer,
        "model_answer",
        "the model answers: \"{text}\"",
        "No tool calls in this reply, so the agent loop stops here and the host passes the text on.",
    ),
    row(
        Case::ModelError,
        "model_error",
        "model server error: {error}",
        "The model server refused the request or failed while answering; no reply was generated.",
    ),
    row(
        Case::ModelEmpty,
        "model_empty",
        "empty reply (finish: {finish})",
        "The model server answered with neither text nor tool calls.",
    ),
    row(
        Case::McpDiscover,
        "mcp_discover",
        "server/discover",
        "The host asks the MCP server which protocol versions and capabilities it has: the stateless (2026-07-28) way to start, with no handshake and no session.",
    ),
    row(
        Case::McpInitialize,
        "mcp_initialize",
        "initialize (protocol {version})",
        "The legacy handshake (MCP up to 2025-11-25): host and server agree on a protocol version and capabilities, and a session starts.",
    ),
    row(
        Case::McpInitialized,
        "mcp_initialized",
        "notifications/initialized",
        "The host confirms the handshake. It is a notification: no id, no answer.",
    ),
    row(
        Case::McpToolsList,
        "mcp_tools_list",
        "tools/list",
        "The host asks the MCP server which tools it has. The answer (names, descriptions, JSON Schemas) is what the host will describe to the model.",
    ),
    row(
        Case::McpToolCall,
        "mcp_tool_call",
        "tools/call {call}",
        "The host runs the tool the model asked for, on the MCP server. This is the only step that acts on the world.",
    ),
    row(
        Case::McpOtherRequest,
        "mcp_other_request",
        "{method}",
        "A JSON-RPC request to the MCP server: one endpoint, and the operation is the body's method field.",
    ),
    row(
        Case::McpNotification,
        "mcp_notification",
        "{method} (notification)",
        "A JSON-RPC notification: it has no id and expects no answer.",
    ),
    row(
        Case::McpDiscoverResult,
        "mcp_discover_result",
        "speaks {versions}",
        "The server names the protocol versions and capabilities it supports.",
    ),
    row(
        Case::McpInitializeResult,
        "mcp_initialize_result",
        "agreed on protocol {version}",
        "The server accepts the handshake; from now on the host sends its session id with every request.",
    ),
    row(
        Case::McpToolsListResult,
        "mcp_tools_list_result",
        "{count} tools: {names}",
        "Each tool comes with a plain-words description and a JSON Schema for its arguments: an API description written for a model, not a developer.",
    ),
    row(
        Case::McpToolResult,
        "mcp_tool_result",
        "result: \"{text}\"",
        "The tool ran.",
    ),
    row(
        Case::McpToolError,
        "mcp_tool_error",
        "tool error: \"{text}\"",
        "A tool error (isError: true) is a normal result meant for the model: it can read the message, fix its call and retry.",
    ),
    row(
        Case::McpInputRequired,
        "mcp_input_required",
        "input required",
        "The server needs more input before it can finish (2026-07-28 multi round-trip): the host must ask for it and retry with a new id.",
    ),
    row(
        Case::McpProtocolError,
        "mcp_protocol_error",
        "JSON-RPC error {code}: {message}",
        "A protocol error (JSON-RPC error): the request itself was wrong, such as an unknown tool, bad params or wrong headers. It is for the developer; the model usually never sees it.",
    ),
    row(
        Case::McpAccepted,
        "mcp_accepted",
        "{status} accepted, no body",
        "The server took the notification; nothing comes back.",
    ),
    row(
        Case::McpOtherResult,
        "mcp_other_result",
        "result",
        "The MCP server answers the request.",
    ),
    row(
        Case::HttpRequest,
        "http_request",
        "{detail}",
        "A request tracer does not read as a known dialect; its body is shown as it was.",
    ),
    row(
        Case::HttpPlainRequest,
        "http_plain_request",
        "{detail}",
        "A request with no body that tracer does not read as a known dialect (a program's own call: a page, an API, a health check); its method and path are its head, and these words say what came back.",
    ),
    row(
        Case::HttpResponse,
        "http_response",
        "{detail}",
        "A response tracer does not read as a known dialect; its body is shown as it was.",
    ),
    row(
        Case::McpServerStream,
        "mcp_server_stream",
        "opens the host's standing stream for server messages",
        "Streamable HTTP: the host opens a GET stream on which the server may send messages of its own (requests to the host, notifications) outside any answer to a POST.",
    ),
    row(
        Case::McpNoServerStream,
        "mcp_no_server_stream",
        "405: this server offers no stream of its own",
        "The protocol lets a server decline the GET stream with 405. Nothing failed: the server's messages come only inside its answers to the host's POSTs.",
    ),
    row(
        Case::McpEndSession,
        "mcp_end_session",
        "the host ends its MCP session",
        "Streamable HTTP: a host that is done sends DELETE with its Mcp-Session-Id, so the server can drop what it kept for the session.",
    ),
    row(
        Case::McpSessionEnded,
        "mcp_session_ended",
        "{status}: the session is over",
        "The server has ended the session (a 404 means it was already gone). A new session starts with a new initialize.",
    ),
    row(
        Case::McpSessionEndRefused,
        "mcp_session_end_refused",
        "405: the server does not let hosts end sessions",
        "The protocol lets a server refuse DELETE with 405; the session then ends when the server expires it. Nothing failed.",
    ),
    row(
        Case::McpSessionLeft,
        "mcp_session_left",
        "the host left without waiting for the answer",
        "The host ended its session and went (a process exiting does this): it closed the connection before the server answered the DELETE. Nothing failed; a new session starts with a new initialize.",
    ),
    row(
        Case::Preconnect,
        "preconnect",
        "a preconnect",
        "The client opens (and warms) the connection before its first real request, so that request does not wait for TCP and TLS. Nothing is asked of the server.",
    ),
    row(
        Case::PreconnectAnswered,
        "preconnect_answered",
        "{status}: the connection is ready",
        "Whatever the status, the server answered: the connection is open for the requests that follow. Nothing failed.",
    ),
    row(
        Case::Tunnel,
        "tunnel",
        "tunnel to {target}, not decrypted",
        "The client asked the forward proxy for a blind tunnel (CONNECT) to a host outside \
         --intercept. Its bytes pass untouched: tracer counts them and times the tunnel, nothing \
         more.",
    ),
    row(
        Case::TunnelClosed,
        "tunnel_closed",
        "tunnel closed: {up} bytes up, {down} bytes down",
        "The encrypted exchange is over. To read what crossed it, add the host to --intercept and \
         have the client trust tracer's CA (`tracer ca --env`).",
    ),
    row(
        Case::InterceptHandshake,
        "intercept_handshake",
        "TLS handshake for {target}, to decrypt it",
        "The client opened a tunnel (CONNECT) and tracer answered its TLS handshake with a \
         certificate from tracer's own CA, so that it can read and record what follows.",
    ),
    row(
        Case::InterceptRefused,
        "intercept_refused",
        "handshake refused: {error}",
        "The client did not accept the certificate tracer made for this host, so nothing was \
         decrypted, forwarded or answered: the client saw a TLS error. It does not trust tracer's \
         CA yet; the line above says how to make it.",
    ),
    row(
        Case::InFlight,
        "in_flight",
        "waiting for the response…",
        "The request was forwarded; its response has not finished yet.",
    ),
    row(
        Case::Failed,
        "failed",
        "no response: {error}",
        "The proxy could not get a response from the upstream (refused, unreachable, timed out, or its certificate refused); tracer answered the caller {status} itself.",
    ),
    row(
        Case::CutOff,
        "cut_off",
        "{status}, cut off: {error}",
        "The upstream answered {status}, but its body stopped before its end; the caller had the same head and the bytes up to the break, as the words say.",
    ),
    row(
        Case::Aborted,
        "aborted",
        "aborted: {error}",
        "The caller went away before the response finished.",
    ),
    row(
        Case::NoteStreamRequested,
        "note_stream_requested",
        "",
        "It asks for a streamed reply.",
    ),
    row(
        Case::NoteStreamReassembled,
        "note_stream_reassembled",
        "",
        "It came as a stream of {records} records, reassembled here into the message they spell.",
    ),
    row(
        Case::NoteOllamaTimings,
        "note_ollama_timings",
        "",
        "Ollama's own timings: load {load}, prompt {prompt_tokens} tokens in {prompt_time}, output {output_tokens} tokens in {output_time} ({rate} tokens/s). Seen by the host: first byte after {first_byte}, done after {duration}.",
    ),
    row(
        Case::NoteTruncated,
        "note_truncated",
        "",
        "Only the first {kept} of {total} bytes were kept; this reading is of that part.",
    ),
    row(
        Case::NoteCutOff,
        "note_cut_off",
        "",
        "The stream stopped before its end marker: the reply may be incomplete.",
    ),
    row(
        Case::NoteMalformed,
        "note_malformed",
        "",
        "The body is not what its dialect should be: {detail}.",
    ),
    row(
        Case::CountTokens,
        "count_tokens",
        "count the tokens of {messages} for {model}",
        "The host asks the model server only how many tokens this content would take (countTokens): nothing is generated and the conversation does not move on.",
    ),
    row(
        Case::TokenCount,
        "token_count",
        "{total} tokens",
        "The model server counted the tokens of the content it was sent; no model answered.",
    ),
    row(
        Case::ModelSideAnswer,
        "model_side_answer",
        "the model answers the host's side request: \"{text}\"",
        "This answer is for the host itself, in the format it asked for (a routing choice, a title): it is not a turn of the conversation, and the agent loop goes on.",
    ),
    row(
        Case::NoteSideRequest,
        "note_side_request",
        "",
        "It offers no tools and asks for an answer in {format}: a side request of the host (routing, a title), not a turn of the conversation.",
    ),
    row(
        Case::NoteSideCall,
        "note_side_call",
        "",
        "A side call ({what}): the host asks this for itself, beside the conversation. It is not a turn of the conversation, not a step of the agent loop, and its words are not the user's.",
    ),
    row(
        Case::NoteGeminiThoughts,
        "note_gemini_thoughts",
        "",
        "The model's thoughts came apart, in parts marked thought: true ({bytes} bytes): a summary of its reasoning for the host to show, not part of the answer.",
    ),
    row(
        Case::NoteGeminiSignature,
        "note_gemini_signature",
        "",
        "A thoughtSignature ({bytes} bytes) seals the reasoning behind this turn: the host must send it back with the functionCall part next time, or the model loses its train of thought.",
    ),
    row(
        Case::CodeAssistCall,
        "code_assist_call",
        "Code Assist {method} (not a model turn)",
        "Gemini CLI's own call to the Code Assist API it uses after a Google sign-in: it asks about the account (its tier, project, quota or experiments), not the model.",
    ),
    row(
        Case::NotePartlyDecoded,
        "note_partly_decoded",
        "",
        "Its Content-Encoding could not be undone to the end ({detail}); this reading is of the decoded part.",
    ),
    row(
        Case::NoteStoppedReading,
        "note_stopped_reading",
        "",
        "The stream had reached its end: {note}, before the body's own end, so the answer is whole.",
    ),
    row(
        Case::NoteStreamedOn,
        "note_streamed_on",
        "",
        "It is told here, when its tool call was complete in the stream; the answer went on streaming while the host ran the tool ({more} more).",
    ),
];
