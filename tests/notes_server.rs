//! notes-server integration tests: the five tools, both MCP eras over real HTTP sockets and a
//! real stdio process, every error row, Origin, size caps and concurrent appends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "notes_server/http_errors.rs"]
mod http_errors;
#[path = "notes_server/http_legacy.rs"]
mod http_legacy;
#[path = "notes_server/http_modern.rs"]
mod http_modern;
#[path = "notes_server/http_safety.rs"]
mod http_safety;
#[path = "notes_server/stdio_process.rs"]
mod stdio_process;
#[path = "notes_server/support.rs"]
mod support;
