//! `tracer import FILE`: read a JSON hop log into the database, all or nothing.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use super::ImportArgs;
use super::stdout_text::outln;
use crate::export::hop_log::HopLog;
use crate::store::Store;
use crate::wire::safe_text::one_line;

pub async fn run(db: &Path, args: ImportArgs) -> anyhow::Result<ExitCode> {
    let file = args.file.display().to_string();
    let bytes = std::fs::read(&args.file).with_context(|| format!("reading {file}"))?;
    // The file is read and checked whole before the database is even opened.
    let log = HopLog::from_json(&bytes).with_context(|| file.clone())?;
    log.check_importable_id().with_context(|| file.clone())?;
    let store = Store::open(db).await?;
    let imported = log.import(&store).await;
    store.close().await;
    let trace_id = imported.with_context(|| format!("importing {file}"))?;
    let title = log
        .title()
        .map(|t| format!(" \"{}\"", one_line(t)))
        .unwrap_or_default();
    outln!(
        "imported trace {}{title} ({}) from {file}",
        one_line(&trace_id),
        crate::trace::explain::plural(log.hops().len(), "hop")
    )?;
    Ok(ExitCode::SUCCESS)
}
