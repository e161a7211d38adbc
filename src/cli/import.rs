//! `tracer import FILE...`: read JSON hop logs into the database, each all or nothing.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use super::ImportArgs;
use super::stdout_text::outln;
use tracer_export::hop_log::HopLog;
use tracer_store::Store;
use tracer_wire::safe_text::one_line;

pub async fn run(db: &Path, args: ImportArgs) -> anyhow::Result<ExitCode> {
    if !args.claude_transcript.is_empty() || !args.claude_bodies.is_empty() {
        super::import_claude::run(db, &args).await?;
        if args.files.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
    }
    // Every file is read and checked whole before the database is even opened: a file that is
    // not a hop log stops the command with nothing written.
    let mut logs = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).with_context(|| format!("reading {file}"))?;
        let log = HopLog::from_json(&bytes).with_context(|| file.clone())?;
        log.check_importable_id().with_context(|| file.clone())?;
        logs.push((file, log));
    }
    let store = Store::open(db).await?;
    let imported = import_each(&store, &logs).await;
    store.close().await;
    imported?;
    Ok(ExitCode::SUCCESS)
}

/// Imports the logs in order, saying each; the first that fails (an id already stored) stops
/// there, after the ones before it.
async fn import_each(store: &Store, logs: &[(String, HopLog)]) -> anyhow::Result<()> {
    for (file, log) in logs {
        let trace_id = log
            .import(store)
            .await
            .with_context(|| format!("importing {file}"))?;
        let title = log
            .title()
            .map(|t| format!(" \"{}\"", one_line(t)))
            .unwrap_or_default();
        outln!(
            "imported trace {}{title} ({}) from {file}",
            one_line(&trace_id),
            tracer_trace::words::plural(log.hops().len(), "hop")
        )?;
    }
    Ok(())
}
