//! `tracer ls --sessions`: sessions newest first (one run of a host each), each with its
//! traces, as blocks of the trace table or one JSON document.

use std::path::Path;

use super::LsArgs;
use super::stdout_text::{emit_json, out, outln};
use super::tables::{now_ns, started, trace_table_at};
use tracer_export::listing::list_sessions;
use tracer_store::Store;
use tracer_trace::read::dates::needs_dates;
use tracer_trace::words::plural;
use tracer_wire::safe_text::one_line;

pub async fn run(store: &Store, db: &Path, args: &LsArgs) -> anyhow::Result<()> {
    let sessions = list_sessions(store, args.limit).await?;
    if args.json {
        emit_json(&serde_json::to_value(&sessions)?)?;
        return Ok(());
    }
    if sessions.is_empty() {
        outln!("no sessions recorded in {} yet", db.display())?;
        return Ok(());
    }
    let now = now_ns();
    let dated = needs_dates(sessions.iter().map(|s| s.started_unix_ns), Some(now));
    for (index, session) in sessions.iter().enumerate() {
        if index > 0 {
            outln!()?;
        }
        let head = match &session.id {
            Some(id) => format!(
                "session {}  started {}  {}  host id {}",
                &id[..id.len().min(8)],
                started(session.started_unix_ns, dated),
                plural(session.traces.len(), "trace"),
                session
                    .host_session_id
                    .as_deref()
                    .map_or_else(|| "-".to_string(), |h| one_line(h).into_owned())
            ),
            None => format!(
                "{} in no session (grouped before sessions)",
                plural(session.traces.len(), "trace")
            ),
        };
        outln!("{head}")?;
        if let Some(billed) =
            super::cost_text::billed_line(session.tokens.as_ref(), session.cost.as_ref(), None)
        {
            outln!("  {}", one_line(&billed))?;
        }
        for line in trace_table_at(&session.traces, now).lines() {
            out!("  {line}\n")?;
        }
    }
    Ok(())
}
