//! The recording path: proxy, store, wrap, grouping, dialects and the CLI over real sockets,
//! real processes and real SQLite files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod foreign_files;
mod http_shapes;
mod store_faults;
