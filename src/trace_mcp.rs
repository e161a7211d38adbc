//! `tracer mcp`: the trace database as a read-only MCP server, so agents can read their own
//! traces. Six tools with progressive disclosure (short text naming the ids to ask about next,
//! plus `structuredContent`); the protocol (both eras) and the transports are notes-server's
//! (`tracer_wire::mcp::server`; `cli/mcp_cmd.rs` serves it with tracer-reference's
//! `notes_server::{serve_http, serve_stdio}`).

mod args;
mod diffing;
mod listing;
mod message_context;
mod reading;
mod tool_stats;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use tracer_store::{Store, StoreError};
use tracer_trace::RecordedHop;
use tracer_wire::hop::now_unix_ns;
use tracer_wire::jsonrpc::ErrorObject;
use tracer_wire::mcp::server::ToolServer;
use tracer_wire::mcp::session::SessionTable;
use tracer_wire::mcp::{
    CallToolResult, Implementation, Tool, ToolAnnotations, call_tool_arguments, call_tool_name,
    unknown_tool,
};

use args::Args;

/// The default listen address of `tracer mcp` (loopback only).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8765";

/// What the server tells a client and its model.
pub const INSTRUCTIONS: &str = "A read-only view of tracer's trace database: what crossed the \
    wire between an agent, its model and its MCP servers, one trace per user request, its \
    messages numbered 1..M. This server never writes to the database. Start with list_traces \
    (newest first), then get_trace with an id (a prefix is enough) for the numbered messages, \
    then get_message for one message's headers and body. search finds text in bodies; \
    tool_stats counts tool calls, errors, times and what each tool's definition costs in context. diff_traces lines two traces up step by \
    step (as tracer diff does) and says in its first line what changed.";

/// One running `tracer mcp`: the database opened read-only and the legacy HTTP sessions.
#[derive(Debug)]
pub struct TraceServer {
    store: Store,
    sessions: SessionTable,
}

impl TraceServer {
    /// Opens the database read-only (it must exist and be a tracer database).
    pub async fn open(db: &Path) -> Result<Arc<Self>, StoreError> {
        let store = Store::open_read_only(db).await?;
        Ok(Arc::new(TraceServer {
            store,
            sessions: SessionTable::new(Duration::from_secs(30 * 60), 1024),
        }))
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The hops of one stored trace, as the trace functions take them.
    async fn hops(&self, trace_id: &str) -> Result<Vec<RecordedHop>, String> {
        (tracer_live::load::hops_as_recorded(&self.store, trace_id).await).map_err(db_error)
    }
}

/// A database failure, told to the model as a tool error.
fn db_error(error: StoreError) -> String {
    format!("The trace database could not be read: {error}")
}

/// A trace lookup by id or prefix that failed, told as a tool error the model can act on.
fn lookup_error(id: &str, error: StoreError) -> String {
    match error {
        StoreError::UnknownTrace(_) => {
            format!("No trace starts with {id}; list_traces shows the ids")
        }
        StoreError::AmbiguousTrace(_) => {
            format!("More than one trace starts with {id}; give more characters of the id")
        }
        other => db_error(other),
    }
}

/// A tool's answer: a short text for the model and the same facts as structured content. The
/// text carries recorded content, and MCP clients print it: its control characters and bidi
/// overrides are shown as visible escapes (`tracer_wire::safe_text`), lines kept.
fn answer(text: String, structured: Value) -> CallToolResult {
    CallToolResult {
        structured_content: Some(structured),
        ..CallToolResult::success(tracer_wire::safe_text::multi_line(&text).into_owned())
    }
}

/// The tools, as `tools/list` gives them.
pub fn tool_list() -> Vec<Tool> {
    let string = |description: &str| json!({"type": "string", "description": description});
    let integer = |description: &str, minimum: u64, maximum: u64| json!({"type": "integer", "description": description, "minimum": minimum, "maximum": maximum});
    let since = string(
        "Only traces that started at or after this time: RFC 3339 (2026-11-30T12:00:00Z) or a \
         span back from now (-1h, -30m, -2d).",
    );
    vec![
        tool(
            "list_traces",
            "List traces",
            "Recorded traces, newest first: id, start, title (the user's request), hops, \
             duration, status and the tools used. Ask get_trace with an id for its messages.",
            json!({
                "limit": integer("How many traces (default 10).", 1, 100),
                "since": since,
                "text": string("Only traces whose title contains this text."),
                "status": string("Only traces with this status: ok, error (any failure), \
                                  tool error, protocol error, http error, failed, in flight."),
                "tool": string("Only traces that called this tool."),
            }),
            &[],
        ),
        tool(
            "get_trace",
            "Get a trace",
            "One trace's numbered messages (1..M in the order they happened), each with its \
             one-line summary; detail=messages adds the plain-words explanation of each.",
            json!({
                "id": string("The trace id, or its first characters (as list_traces shows)."),
                "detail": {"type": "string", "enum": ["summary", "messages"],
                           "description": "summary (default): one line per message; messages: \
                                           with each explanation."},
            }),
            &["id"],
        ),
        tool(
            "get_message",
            "Get one message",
            "One numbered message of a trace in full: summary, explanation, headers and body \
             (cut at max_bytes, saying so), for a streamed answer its chunk timing; a model \
             request with what its context is made of (bytes and ≈ tokens per part), a model \
             answer with its cost at list prices and the prompt cache's verdict.",
            json!({
                "trace": string("The trace id, or its first characters."),
                "number": integer("The message number, as get_trace shows it.", 1, 1_000_000),
                "max_bytes": integer("Cut the body after this many bytes (default 4000).", 100, 1_048_576),
            }),
            &["trace", "number"],
        ),
        tool(
            "search",
            "Search bodies",
            "Traces and message numbers where a text occurs in a request or response body \
             (letters in any case), newest first.",
            json!({
                "text": string("The text to find."),
                "limit": integer("How many traces (default 20).", 1, 100),
            }),
            &["text"],
        ),
        tool(
            "tool_stats",
            "Tool statistics",
            "Per tool: calls, tool errors (isError), protocol errors (JSON-RPC error), p50 \
             and p95 time, which models asked for it, and what its definition weighs in the \
             model requests that offered it (≈ tokens and ≈ dollars at list prices); the same \
             by MCP server and for the host's own tools.",
            json!({ "since": since }),
            &[],
        ),
        tool(
            "diff_traces",
            "Compare two traces",
            "What tracer diff says: two traces lined up step by step (a step is one model call \
             and the tool calls it asked for), a one-sentence summary of what changed first \
             (tools, arguments, tool errors, the reply, time), then each step's calls side by \
             side.",
            json!({
                "a": string("The first trace id, or its first characters."),
                "b": string("The second trace id, or its first characters."),
            }),
            &["a", "b"],
        ),
    ]
}

/// A read-only tool over the trace database.
fn tool(name: &str, title: &str, description: &str, properties: Value, required: &[&str]) -> Tool {
    let hints = ToolAnnotations::closed_world(true, false, true);
    Tool::closed_input(name, title, description, properties, required, hints)
}

/// The six tools, by name, with the arguments each takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TraceTool {
    ListTraces,
    GetTrace,
    GetMessage,
    Search,
    ToolStats,
    DiffTraces,
}

impl TraceTool {
    const ALL: [TraceTool; 6] = [
        TraceTool::ListTraces,
        TraceTool::GetTrace,
        TraceTool::GetMessage,
        TraceTool::Search,
        TraceTool::ToolStats,
        TraceTool::DiffTraces,
    ];

    fn name(self) -> &'static str {
        match self {
            TraceTool::ListTraces => "list_traces",
            TraceTool::GetTrace => "get_trace",
            TraceTool::GetMessage => "get_message",
            TraceTool::Search => "search",
            TraceTool::ToolStats => "tool_stats",
            TraceTool::DiffTraces => "diff_traces",
        }
    }

    fn takes(self) -> &'static [&'static str] {
        match self {
            TraceTool::ListTraces => &["limit", "since", "text", "status", "tool"],
            TraceTool::GetTrace => &["id", "detail"],
            TraceTool::GetMessage => &["trace", "number", "max_bytes"],
            TraceTool::Search => &["text", "limit"],
            TraceTool::ToolStats => &["since"],
            TraceTool::DiffTraces => &["a", "b"],
        }
    }

    fn named(name: &str) -> Option<TraceTool> {
        TraceTool::ALL.into_iter().find(|tool| tool.name() == name)
    }
}

impl TraceServer {
    /// Runs one tool; `Err` is the message of a tool error.
    async fn run(
        &self,
        tool: TraceTool,
        arguments: &Map<String, Value>,
    ) -> Result<CallToolResult, String> {
        let args = Args::new(tool.name(), arguments, tool.takes())?;
        let now = now_unix_ns();
        match tool {
            TraceTool::ListTraces => self.list_traces(&args, now).await,
            TraceTool::GetTrace => self.get_trace(&args).await,
            TraceTool::GetMessage => self.get_message(&args).await,
            TraceTool::Search => self.search(&args).await,
            TraceTool::ToolStats => self.tool_stats(&args, now).await,
            TraceTool::DiffTraces => self.diff_traces(&args).await,
        }
    }
}

impl ToolServer for TraceServer {
    fn server_info(&self) -> Implementation {
        Implementation {
            title: Some("tracer trace database (read-only)".to_owned()),
            ..Implementation::new("tracer", env!("CARGO_PKG_VERSION"))
        }
    }

    fn instructions(&self) -> String {
        INSTRUCTIONS.to_owned()
    }

    fn tool_list(&self) -> Vec<Tool> {
        tool_list()
    }

    async fn call_tool(&self, params: Option<&Value>) -> Result<CallToolResult, ErrorObject> {
        let name = call_tool_name(params)?;
        let Some(tool) = TraceTool::named(name) else {
            return Err(unknown_tool(name));
        };
        let arguments = call_tool_arguments(params)?;
        Ok(match self.run(tool, &arguments).await {
            Ok(result) => result,
            Err(message) => CallToolResult::tool_error(
                tracer_wire::safe_text::multi_line(&message).into_owned(),
            ),
        })
    }

    fn sessions(&self) -> &SessionTable {
        &self.sessions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listed_tools_are_the_ones_run_with_the_arguments_they_take() {
        let tools = tool_list();
        assert_eq!(tools.len(), TraceTool::ALL.len());
        for (tool, listed) in TraceTool::ALL.into_iter().zip(&tools) {
            assert_eq!(listed.name, tool.name());
            let properties = listed.input_schema["properties"]
                .as_object()
                .map(|p| p.keys().map(String::as_str).collect::<Vec<_>>())
                .unwrap_or_default();
            assert_eq!(properties, tool.takes(), "{}", tool.name());
            assert_eq!(
                listed.annotations.as_ref().and_then(|a| a.read_only_hint),
                Some(true)
            );
        }
        assert!(INSTRUCTIONS.contains("never writes to the database"));
    }
}
