//! `tracer demo`: run the article end to end and print its numbered trace.

use std::path::Path;
use std::process::ExitCode;

use super::DemoArgs;
use super::show::render;
use crate::demo::{ModelSource, run as run_demo};
use crate::export::hop_log::HopLog;
use crate::reference::agent::config::ollama_base_url;
use crate::store::Store;

pub async fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => std::env::temp_dir().join(format!(
            "tracer-demo-{}",
            &crate::wire::ids::random_hex_id(4)
        )),
    };
    let ollama =
        (!args.recorded).then(|| ollama_base_url(std::env::var("OLLAMA_HOST").ok().as_deref()));
    println!("tracer demo: working in {}", dir.display());
    let outcome = run_demo(
        &dir,
        ollama.as_deref(),
        &args.model,
        args.redaction.redact(),
    )
    .await?;
    match &outcome.model {
        ModelSource::LiveOllama { url } => println!("model: live Ollama at {url} ({})", args.model),
        ModelSource::Recorded => println!(
            "model: the recorded buy-milk model (sample-traces/buy-milk.json, built in){}",
            if args.recorded {
                ""
            } else {
                "; no Ollama with the model answered"
            }
        ),
    }
    println!();
    println!("you: {}", crate::demo::BUY_MILK_MESSAGE);
    println!(
        "agent: {}",
        outcome.reply["reply"].as_str().unwrap_or("(no reply)")
    );
    println!(
        "notes file {}: {:?}",
        outcome.notes.display(),
        std::fs::read_to_string(&outcome.notes).unwrap_or_default()
    );
    println!();
    let store = Store::open(&outcome.db).await?;
    let log = HopLog::from_store(&store, &outcome.trace_id).await?;
    print!("{}", render(&log));
    store.close().await;
    let db = display_path(&outcome.db);
    let short = &outcome.trace_id[..outcome.trace_id.len().min(8)];
    println!();
    println!("Next:");
    let commands = [
        (format!("tracer --db {db} tui"), "browse it live"),
        (
            format!("tracer --db {db} replay {short}"),
            "step through it, message by message",
        ),
        (
            format!("tracer --db {db} export {short} --format html -o buy-milk.html"),
            "a page to open in a browser",
        ),
        (
            format!("tracer --db {db} export {short} --format md"),
            "a handout (json, har, otlp and mermaid too)",
        ),
    ];
    let width = commands.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (command, what) in commands {
        println!("  {command:<width$}  # {what}");
    }
    Ok(ExitCode::SUCCESS)
}

fn display_path(path: &Path) -> String {
    let text = path.display().to_string();
    if text.contains(' ') {
        format!("'{text}'")
    } else {
        text
    }
}
