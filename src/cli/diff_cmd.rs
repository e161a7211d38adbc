//! `tracer diff A B`: two traces (ids, prefixes or hop-log files) lined up step by step.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use super::stdout_text::{emit, emit_json};
use crate::compare::diff::Diff;
use crate::compare::diff_text::render;
use crate::compare::load::{is_file, load_run};
use tracer_live::correlate::group_new_hops;
use tracer_store::Store;

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first run: a trace id, an unambiguous prefix of one, or a hop-log file
    #[arg(value_name = "A")]
    pub a: String,
    /// The second run, the same way
    #[arg(value_name = "B")]
    pub b: String,
    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
}

pub async fn run(db: &Path, args: DiffArgs) -> anyhow::Result<ExitCode> {
    let store = if is_file(&args.a) && is_file(&args.b) {
        None
    } else {
        let store = Store::open_existing(db).await?;
        group_new_hops(&store).await?;
        Some(store)
    };
    let loaded = async {
        let a = load_run(store.as_ref(), &args.a).await?;
        let b = load_run(store.as_ref(), &args.b).await?;
        anyhow::Ok((a, b))
    }
    .await;
    if let Some(store) = &store {
        store.close().await;
    }
    let (a, b) = loaded?;
    let diff = Diff::new(a, b);
    if args.json {
        emit_json(&diff.to_json())?;
    } else {
        emit(&render(&diff))?;
    }
    Ok(ExitCode::SUCCESS)
}
