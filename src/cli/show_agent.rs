//! The agent's own account in `tracer show`: its telemetry events placed in the loaded trace
//! (`tracer_live::agent_account`), and their lines among the numbered messages.

use tracer_export::hop_log::{AgentEventEntry, HopLog};
use tracer_live::load::LoadedTrace;
use tracer_store::Store;
use tracer_wire::safe_text::one_line;

/// Events are set off under the message they follow by this much.
const INDENT: &str = "     ";

/// The log with the trace's agent events placed in it (none when the store has none).
pub async fn placed(store: &Store, trace: &LoadedTrace, log: HopLog) -> HopLog {
    let placed = match tracer_live::agent_account::for_trace(store, trace).await {
        Ok(placed) => placed,
        Err(error) => {
            tracer_serve::say!("tracer: reading the agent's own telemetry: {error}");
            return log;
        }
    };
    let hop_ids: Vec<String> = trace.hops.iter().map(|h| h.start.id.clone()).collect();
    log.with_agent_events(&placed, &hop_ids)
}

/// The lines of the events that follow message `after` (None: those before the first message);
/// with `joins`, each says the rule that placed it. Log events only: spans and metric points are
/// in the hop log (`--json`).
pub fn lines_after(log: &HopLog, after: Option<usize>, joins: bool) -> String {
    let mut out = String::new();
    let here = |e: &&AgentEventEntry| e.after_message == after && e.signal == "log";
    for event in log.agent_events().iter().filter(here) {
        out.push_str(&line(event, joins));
    }
    out
}

fn line(event: &AgentEventEntry, joins: bool) -> String {
    let mut out = format!("{INDENT}⋯ agent  {}", one_line(&event.sentence));
    if joins {
        out.push_str(&format!(
            "  [{} {}, placed by {}]",
            one_line(&event.signal),
            one_line(&event.name),
            one_line(&event.rule)
        ));
    }
    out.push('\n');
    if let Some(check) = &event.cost_check {
        out.push_str(&format!("{INDENT}         cost: {}\n", one_line(check)));
    }
    out
}
