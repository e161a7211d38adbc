//! The recording path's integration tests: proxy, store, wrap, grouping, dialects, cli.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod https_ca;
mod https_reverse;
mod https_support;
mod interop_https_curl;
