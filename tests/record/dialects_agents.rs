//! Real agents read in their own terms.

use crate::agent_trace::agent_hops;
use tracer::trace::explain_trace;

#[test]
fn scratch_print() {
    for agent in ["claude-code", "codex", "gemini-cli"] {
        let hops = agent_hops(agent);
        for m in explain_trace(&hops) {
            println!("{}\n      {}\n", m.line(), m.explanation);
        }
    }
}
