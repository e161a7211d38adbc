//! `tracer import --claude-transcript FILE --claude-bodies DIR`: Claude Code's own records of a
//! run, read without a CA (crate::claude_sources), written as hops and events and grouped, each
//! source's limits said.

use std::path::Path;

use anyhow::Context;

use super::ImportArgs;
use super::stdout_text::outln;
use crate::claude_sources::{SourceCall, bodies, store, transcript};
use tracer_store::Store;
use tracer_wire::agent_event::AgentEvent;

/// The bound on each string of an event read from a source (as on bodies).
const MAX_VALUE: usize = 16 * 1024 * 1024;

/// Every source is read before the database is opened: one that cannot be read stops the
/// command with nothing written.
pub async fn run(db: &Path, args: &ImportArgs) -> anyhow::Result<()> {
    let mut sources: Vec<(String, &'static str, Vec<SourceCall>, Vec<AgentEvent>)> = Vec::new();
    for path in &args.claude_transcript {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {shown}"))?;
        let read = transcript::read(&text);
        if read.calls.is_empty() && read.events.is_empty() {
            anyhow::bail!(
                "{shown} holds no lines of a Claude Code transcript ({} unreadable)",
                read.unreadable
            );
        }
        if read.unreadable > 0 {
            tracer_serve::say!(
                "tracer import: {shown}: {} lines were not JSON and were skipped",
                read.unreadable
            );
        }
        sources.push((shown, transcript::NOTE, read.calls, read.events));
    }
    for dir in &args.claude_bodies {
        let shown = dir.display().to_string();
        let (calls, unreadable) = bodies::read(dir)?;
        if unreadable > 0 {
            tracer_serve::say!(
                "tracer import: {shown}: {unreadable} files were not JSON and were skipped"
            );
        }
        sources.push((shown, bodies::NOTE, calls, Vec::new()));
    }
    let store = Store::open(db).await?;
    let mut result = Ok(());
    for (shown, note, calls, events) in sources {
        let written = store::write(&store, &calls, events, !args.no_redact, MAX_VALUE).await;
        match written {
            Ok(w) => {
                outln!(
                    "imported {} from {shown}: {} as hops, {} already on the wire (joined, not added), {} of the agent's own events",
                    tracer_trace::words::plural(calls.len(), "model call"),
                    w.hops,
                    w.on_wire,
                    w.events
                )?;
                if w.hops > 0 {
                    outln!("  {note}")?;
                }
            }
            Err(error) => {
                result = Err(error.context(format!("importing {shown}")));
                break;
            }
        }
    }
    store.close().await;
    result
}
