//! Comparing runs (`tracer diff`, `tracer rerun`, `tracer eval`): traces read as steps, lined up
//! and summarized, re-sent through the proxy, and question sets judged from the recorded wire.
//!
//! Layout: `steps` (a trace as steps, from the dialect readers), `load` (from the database or a
//! hop-log file), `diff` and `diff_text` (two runs side by side), `send` (requests with a fresh
//! `traceparent`, waiting for their trace), `rerun_agent` and `rerun_step` (the two forms of
//! rerun), `tally`, `question_set` and `matchers` (the TOML question set), `judge` (one answer's
//! verdict), `eval_run` and `eval_report` (running, storing and showing eval runs), `progress`
//! (stderr progress and the Ctrl-C stop flag).

pub mod diff;
pub mod diff_text;
pub mod eval_compare;
pub mod eval_report;
pub mod eval_run;
pub mod judge;
pub mod load;
pub mod matchers;
pub mod progress;
pub mod question_set;
pub mod rerun_agent;
pub mod rerun_step;
pub mod send;
pub mod step_edits;
pub mod step_types;
pub mod steps;
pub mod tally;
