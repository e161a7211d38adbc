//! Exports of recorded traces. Each format is a sibling module; `hop_log` is tracer's own JSON
//! hop log (DESIGN.md, "Exports"), which `tracer show --json` prints and `tracer import` reads.

pub mod hop_log;
