//! Exports of recorded traces, and the live OpenTelemetry exporter. Each file format is a sibling
//! module over one loaded trace; `hop_log` is tracer's own JSON hop log
//! (docs/hop-log.schema.json), which `tracer show --json` prints and `tracer import` reads.
//!
//! Floor 3: it may use `tracer-live`, `tracer-store`, `tracer-trace`, `tracer-serve` and
//! `tracer-wire` (`scripts/check_layers.py`), never `tracer-record` (the live exporter watches the
//! database, not the proxy) nor `tracer-reference`. The app uses it (`tracer export`, `show`,
//! `import`, `ls`, `search`, `demo`, the TUI's export, `tracer mcp`, replay, and `--otlp` on
//! `proxy`, `run`, `up` and `wrap`). Its API is what the app uses: everything else is private or
//! `pub(crate)`, and `unreachable_pub` warns of a `pub` item no other crate can reach.

#![warn(unreachable_pub)]

// tracer's own format: the JSON hop log, written and read back.
pub mod hop_log;

// What the listings say of traces and sessions (`ls`, `search --json`, the web UI).
pub mod listing;

// Other programs' formats: HAR, OpenTelemetry (OTLP/JSON and protobuf), Mermaid and the
// Markdown handout, the HTML handout.
pub mod har;
pub mod html;
pub mod mermaid;
pub mod otlp;

// What the file exports share: a trace to export, its bodies as text, UTC times.
mod agent_lines;
pub mod body_text;

// The live OpenTelemetry exporter (`--otlp`), and `tracer export --push` of what it missed.
pub mod exporter;

// Inside: a WebSocket hop in HAR, and its messages as the handouts list them.
mod har_ws;
mod ws_frames_text;
