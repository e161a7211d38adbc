//! `tracer demo`: run the article end to end and print its numbered trace.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::DemoArgs;
use super::show::render;
use super::stdout_text::{out, outln};
use crate::demo::{ModelSource, run as run_demo};
use tracer_export::hop_log::HopLog;
use tracer_reference::agent::config::ollama_base_url;
use tracer_store::Store;

/// `db` is `--db` or `TRACER_DB` when one was given: the demo records there, else beside its
/// notes file in `--dir`.
pub async fn run(db: Option<PathBuf>, args: DemoArgs) -> anyhow::Result<ExitCode> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => std::env::temp_dir().join(format!(
            "tracer-demo-{}",
            &tracer_wire::ids::random_hex_id(4)
        )),
    };
    let ollama =
        (!args.recorded).then(|| ollama_base_url(std::env::var("OLLAMA_HOST").ok().as_deref()));
    outln!("tracer demo: working in {}", dir.display())?;
    let outcome = run_demo(
        &dir,
        db.as_deref(),
        ollama.as_deref(),
        &args.model,
        args.redaction.redact(),
    )
    .await?;
    match &outcome.model {
        ModelSource::LiveOllama { url } => outln!("model: live Ollama at {url} ({})", args.model)?,
        ModelSource::Recorded => outln!(
            "model: the recorded buy-milk model (sample-traces/buy-milk.json, built in){}",
            if args.recorded {
                ""
            } else {
                "; no Ollama with the model answered"
            }
        )?,
    }
    outln!()?;
    outln!("you: {}", crate::demo::BUY_MILK_MESSAGE)?;
    outln!(
        "agent: {}",
        outcome.reply["reply"].as_str().unwrap_or("(no reply)")
    )?;
    outln!(
        "notes file {}: {:?}",
        outcome.notes.display(),
        std::fs::read_to_string(&outcome.notes).unwrap_or_default()
    )?;
    outln!()?;
    let store = Store::open(&outcome.db).await?;
    let log = HopLog::from_store(&store, &outcome.trace_id).await?;
    out!("{}", render(&log))?;
    store.close().await;
    let db = display_path(&outcome.db);
    let short = &outcome.trace_id[..outcome.trace_id.len().min(8)];
    outln!()?;
    outln!("Next:")?;
    let tracer = this_tracer();
    let commands = [
        (format!("{tracer} --db {db} tui"), "browse it live"),
        (
            format!("{tracer} --db {db} replay {short}"),
            "step through it, message by message",
        ),
        (
            format!("{tracer} --db {db} export {short} --format html -o buy-milk.html"),
            "a page to open in a browser",
        ),
        (
            format!("{tracer} --db {db} export {short} --format md"),
            "a handout (json, har, otlp and mermaid too)",
        ),
    ];
    let width = commands.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (command, what) in commands {
        outln!("  {command:<width$}  # {what}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// How to run this tracer again: `tracer` when that name on the PATH is this very binary, else
/// the full path of the one running (e.g. `target/release/tracer` after `cargo run`), so the
/// commands it prints run as printed.
fn this_tracer() -> String {
    let Ok(me) = std::env::current_exe().and_then(std::fs::canonicalize) else {
        return "tracer".to_string();
    };
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("tracer"))
            .find(|candidate| candidate.is_file())
    });
    match on_path.and_then(|found| std::fs::canonicalize(found).ok()) {
        Some(found) if found == me => "tracer".to_string(),
        _ => display_path(&me),
    }
}

fn display_path(path: &Path) -> String {
    let text = path.display().to_string();
    if text.contains(' ') {
        format!("'{text}'")
    } else {
        text
    }
}
