//! Recording: one `Recording` every capture path starts and finishes the same way, the proxy
//! (listeners, streaming forwarding, the bounded body tee, TLS), tracer's own certificate
//! authority, and `tracer wrap`'s stdio recording, each handing hops to the store's writer.
//!
//! Floor 2: it may use `tracer-store`, `tracer-serve` and `tracer-wire`, nothing above them
//! (`scripts/check_layers.py`): recording needs no trace read, grouped or explained, so it names
//! neither `tracer-trace` nor `tracer-live` (work beside a recording, such as live grouping, is a
//! `recording::Beside` the app hands in). The app uses it (`tracer proxy`, `run`, `up`, `demo`,
//! `wrap`, `ca`), as do the examples and the tests. Its API is what they use: everything else is
//! private or `pub(crate)`, and `unreachable_pub` warns of a `pub` item no other crate can reach.

#![warn(unreachable_pub)]

// One recording: started, worked beside and finished the same way by every capture path.
pub mod recording;

// The capture paths: the HTTP proxy (reverse routes and the forward proxy), and a stdio MCP
// server run as a child.
pub mod proxy;
pub mod wrap;

// The receiver of the agent's own telemetry (OTLP/HTTP), stored beside the hops.
pub mod agent_telemetry;

// tracer's own certificate authority, for the forward proxy's interception and `tracer ca`.
pub mod ca;
