//! `tracer ls`: traces newest first (or, with `--hops`, the raw hops), as a table or one JSON
//! document. Hops not yet grouped (e.g. written by `tracer wrap`) are grouped first.

use std::path::Path;
use std::process::ExitCode;

use super::LsArgs;
use super::stdout_text::{emit_json, out, outln};
use super::tables::{hop_table, trace_table};
use tracer_export::exporter::push::push_command;
use tracer_export::listing::list_traces;
use tracer_live::correlate::group_new_hops;
use tracer_store::exports::SPANS_NOT_EXPORTED;
use tracer_store::{HOPS_NOT_WRITTEN, Store};
use tracer_trace::words::plural;

pub async fn run(db: &Path, args: LsArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(db).await?;
    group_new_hops(&store).await?;
    let not_written = store.counter(HOPS_NOT_WRITTEN).await?;
    let not_exported = store.counter(SPANS_NOT_EXPORTED).await?;
    if args.hops {
        let hops = store.recent_hops(args.limit).await?;
        if args.json {
            emit_json(&serde_json::to_value(&hops)?)?;
        } else {
            out!("{}", hop_table(&hops))?;
            if hops.is_empty() && args.limit > 0 {
                outln!("no hops recorded in {} yet", db.display())?;
            } else if hops.is_empty() {
                outln!(
                    "-n {} lists no hops; {} in {} (tracer ls --hops -n N lists the newest N)",
                    args.limit,
                    plural(
                        usize::try_from(store.hop_count().await?).unwrap_or(0),
                        "hop"
                    ),
                    db.display()
                )?;
            }
        }
    } else if args.sessions {
        super::ls_sessions::run(&store, db, &args).await?;
    } else {
        let traces = list_traces(&store, args.limit).await?;
        if args.json {
            emit_json(&serde_json::to_value(&traces)?)?;
        } else {
            out!("{}", trace_table(&traces))?;
            if traces.is_empty() {
                outln!("{}", nothing_listed(&store, db, args.limit).await?)?;
            }
        }
    }
    let unreadable = store.unreadable_rows();
    if unreadable > 0 {
        tracer_serve::say!("{}", unreadable_note(unreadable));
    }
    if not_written > 0 && !args.json {
        let hops = match not_written {
            1 => "1 hop was".to_string(),
            n => format!("{n} hops were"),
        };
        outln!("{hops} carried but not written (store busy or failing)")?;
    }
    if not_exported > 0 && !args.json {
        // Per receiver, named as a push reaches it again; the rest a receiver took and rejected.
        let targets = store.failed_targets().await?;
        let failed: i64 = targets.iter().map(|(_, spans)| spans).sum();
        for (target, spans) in targets {
            outln!(
                "{spans} spans were not exported to {target} ({} sends them)",
                push_command(&target)
            )?;
        }
        if not_exported > failed {
            outln!(
                "{} spans were rejected by an OpenTelemetry receiver (a push does not send them again)",
                not_exported - failed
            )?;
        }
    }
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

/// What an empty listing means: nothing recorded yet, or nothing asked for (`-n 0`).
async fn nothing_listed(store: &Store, db: &Path, limit: i64) -> anyhow::Result<String> {
    if limit > 0 {
        return Ok(format!("no traces recorded in {} yet", db.display()));
    }
    let stored = store.traces().await?.len();
    Ok(format!(
        "-n {limit} lists no traces; {} in {} (tracer ls -n N lists the newest N)",
        plural(stored, "trace"),
        db.display()
    ))
}

/// The one line that says rows were skipped because they could not be read.
pub fn unreadable_note(rows: u64) -> String {
    format!(
        "tracer: {} of the database could not be read and {} skipped \
         (a column holds the wrong type or malformed JSON)",
        plural(usize::try_from(rows).unwrap_or(usize::MAX), "row"),
        if rows == 1 { "was" } else { "were" }
    )
}
