//! Exports of recorded traces (`html` is the handout page). Each format is a sibling module;
//! `hop_log` is tracer's own JSON hop log (docs/hop-log.schema.json), which `tracer show --json`
//! prints and `tracer import` reads.

pub mod body_text;
pub mod har;
mod har_ws;
pub mod hop_log;
pub mod html;
pub mod mermaid;
pub mod otlp;
mod ws_frames_text;
