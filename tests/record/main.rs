//! The recording path's integration tests: proxy, store, wrap, grouping, dialects, cli.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dialects_cloud;
mod https_ca;
mod https_forward_edges;
mod https_reverse;
mod https_support;
mod interop_https_curl;
mod interop_https_sdk;
#[path = "../support/interop_peers.rs"]
mod interop_peers;
mod openai_double;
