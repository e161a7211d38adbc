//! notes-server, the reference MCP server: five tools (read, write, append, update, clear) over
//! one plain-text notes file, speaking both MCP eras over Streamable HTTP (`POST /mcp`) or stdio.
//!
//! Start it in-process with [`NotesServer::open`] and then [`serve_http`] on a bound listener
//! (tests use 127.0.0.1:0) or [`serve_stdio`] on any reader/writer pair.

pub(crate) mod http;
pub(crate) mod notes_file;
pub(crate) mod origin;
pub(crate) mod protocol;
pub(crate) mod stdio;
pub(crate) mod tools;

pub use http::serve as serve_http;
pub(crate) use notes_file::{NotesError, NotesFile};
pub use stdio::serve as serve_stdio;
/// The legacy HTTP sessions (shared MCP server code, in `wire`).
pub use tracer_wire::mcp::session;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tracer_wire::mcp::session::SessionTable;

/// The default notes file, relative to the working folder (as in the article).
pub const DEFAULT_FILE: &str = "data/db";
/// The default listen address (the article's MCP port, loopback only).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// The default cap on the notes file: 10 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// The cap on one request body (HTTP) or line (stdio): 1 MiB.
const MAX_BODY_BYTES: usize = tracer_wire::mcp::server::MAX_BODY_BYTES;

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct NotesServerConfig {
    /// The notes file; created with its folder if missing.
    pub file: PathBuf,
    /// A change that would make the file larger than this is refused (a tool error).
    pub max_file_bytes: u64,
    /// Request bodies (and stdio lines) larger than this get 413 (or a JSON-RPC error on stdio).
    pub max_body_bytes: usize,
    /// Answer HTTP requests as `text/event-stream` instead of `application/json`.
    pub sse: bool,
    /// A legacy session unused for this long is forgotten (its id then gets 404).
    pub session_idle_timeout: Duration,
    /// At most this many legacy sessions are kept; the least recently used one goes first.
    pub max_sessions: usize,
}

impl NotesServerConfig {
    /// The defaults for a given notes file.
    pub fn new(file: impl Into<PathBuf>) -> Self {
        NotesServerConfig {
            file: file.into(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_body_bytes: MAX_BODY_BYTES,
            sse: false,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 1024,
        }
    }
}

impl Default for NotesServerConfig {
    fn default() -> Self {
        NotesServerConfig::new(DEFAULT_FILE)
    }
}

/// One running notes server: the notes file, the legacy sessions and the settings.
#[derive(Debug)]
pub struct NotesServer {
    notes: NotesFile,
    sessions: SessionTable,
    config: NotesServerConfig,
}

impl NotesServer {
    /// Opens the notes file (creating it if missing) and sets up the server.
    pub async fn open(config: NotesServerConfig) -> Result<Arc<Self>, NotesError> {
        let notes = NotesFile::open(&config.file, config.max_file_bytes).await?;
        let sessions = SessionTable::new(config.session_idle_timeout, config.max_sessions);
        Ok(Arc::new(NotesServer {
            notes,
            sessions,
            config,
        }))
    }

    pub fn sessions(&self) -> &SessionTable {
        &self.sessions
    }
}
