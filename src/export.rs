//! Exports of recorded traces: the formats people already open (HAR, OTLP, Mermaid, Markdown).

pub mod body_text;
pub mod har;
pub mod mermaid;
pub mod otlp;
