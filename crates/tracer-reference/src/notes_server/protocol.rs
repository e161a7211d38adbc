//! notes-server's side of the MCP protocol: who it is, what it tells clients, and its five tools;
//! the protocol itself (both eras, envelope and header checks) is `tracer_wire::mcp::server`'s.

use super::NotesServer;
use super::tools::{call_tool, tool_list};
use serde_json::Value;
use tracer_wire::jsonrpc::ErrorObject;
use tracer_wire::mcp::session::SessionTable;
use tracer_wire::mcp::{CallToolResult, Implementation, Tool};

pub(crate) use tracer_wire::mcp::server::ToolServer;

/// What the server tells a client about itself.
const INSTRUCTIONS: &str = "One plain-text notes file. To add a note use append; to see the \
    notes use read; to change text use update; write replaces the whole file; clear empties it.";

pub(crate) fn server_info() -> Implementation {
    Implementation {
        title: Some("Notes MCP server".to_owned()),
        ..Implementation::new("notes-server", env!("CARGO_PKG_VERSION"))
    }
}

impl ToolServer for NotesServer {
    fn server_info(&self) -> Implementation {
        server_info()
    }

    fn instructions(&self) -> String {
        INSTRUCTIONS.to_owned()
    }

    fn tool_list(&self) -> Vec<Tool> {
        tool_list()
    }

    async fn call_tool(&self, params: Option<&Value>) -> Result<CallToolResult, ErrorObject> {
        call_tool(&self.notes, params).await
    }

    fn sessions(&self) -> &SessionTable {
        &self.sessions
    }

    fn max_body_bytes(&self) -> usize {
        self.config.max_body_bytes
    }

    fn sse(&self) -> bool {
        self.config.sse
    }
}
