//! notes-server integration tests: the five tools, both MCP eras over real HTTP sockets and a
//! real stdio process, every error row, Origin, size caps and concurrent appends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "http_errors.rs"]
mod http_errors;
#[path = "http_legacy.rs"]
mod http_legacy;
#[path = "http_modern.rs"]
mod http_modern;
#[path = "http_safety.rs"]
mod http_safety;
#[path = "stdio_process.rs"]
mod stdio_process;
#[path = "support.rs"]
mod support;
