//! `tracer diff`, `tracer rerun` and `tracer eval` over real processes: notes-server,
//! notes-agent and `tracer proxy` as child processes, the scripted model in the test.

mod doubles;
mod system;

mod diff;
mod eval;
mod eval_compare;
mod fork;
mod rerun;
mod rerun_edits;
