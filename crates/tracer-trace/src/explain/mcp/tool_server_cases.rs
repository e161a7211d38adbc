//! The words for a host's standing stream for server messages: open while the host runs, closed
//! when it stops; neither holds a trace open nor fails it. And an OpenAPI tool server in front of
//! MCP (mcpo): its tool list, its REST tool calls and its own errors.

use super::cases::{McpCase, mcp};
use crate::explain::CaseText;

pub(crate) const TOOL_SERVERS: &[CaseText] = &[
    mcp(
        McpCase::StandingStreamOpen,
        "standing_stream_open",
        "open: the host's standing stream for server messages",
        "The host keeps this GET open for as long as it runs, so that the server can send requests and notifications of its own outside any answer. It waits for no answer: it holds no trace open, and the calls the host makes meanwhile get traces of their own.",
    ),
    mcp(
        McpCase::StandingStreamClosed,
        "standing_stream_closed",
        "the host closed its standing stream after {open_for}",
        "The host stopped listening for server messages (it ended its session, or stopped running). A standing stream has no end of its own: this is how it ends, not a failure.",
    ),
    mcp(
        McpCase::RestDocumentRequest,
        "rest_document_request",
        "asks the tool server for its OpenAPI document",
        "An OpenAPI tool server (such as mcpo) describes its tools as REST endpoints in an OpenAPI document; a host reads it to learn which tools it may offer the model.",
    ),
    mcp(
        McpCase::RestToolsOffered,
        "rest_tools_offered",
        "{tools} offered as REST endpoints: {names}",
        "Each tool is a POST endpoint whose JSON body is the tool's arguments and whose answer is its result. A host that speaks OpenAPI but not MCP calls these endpoints; the tool server turns each call into MCP.",
    ),
    mcp(
        McpCase::RestToolCall,
        "rest_tool_call",
        "tool call in REST form: {call}",
        "A tool call sent as a REST request: the path names the tool, the JSON body holds its arguments. The tool server runs it on its MCP server as tools/call.",
    ),
    mcp(
        McpCase::RestToolResult,
        "rest_tool_result",
        "tool result: {result}",
        "The tool server answers with the tool's result as JSON: what the MCP server's tools/call returned, without the JSON-RPC envelope.",
    ),
    mcp(
        McpCase::RestRefused,
        "rest_refused",
        "refused the arguments ({status}): {problems}",
        "The tool server's own check of the arguments against the endpoint's schema failed (FastAPI's validation error). The call never reached the MCP server: no tool ran.",
    ),
    mcp(
        McpCase::RestError,
        "rest_error",
        "error {status}: {detail}",
        "The tool server reports an error in its own words (`detail`): the MCP server refused or failed the call, or the tool server could not reach it. No result came back.",
    ),
    mcp(
        McpCase::NoteRestBuiltFrom,
        "note_rest_built_from",
        "",
        "The tool server built this list from the MCP server's tools/list (message {listed}): the same tools, each turned into an endpoint.",
    ),
];
