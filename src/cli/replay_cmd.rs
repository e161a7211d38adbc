//! `tracer replay <id | file.json>`: a trace message by message, in the TUI or (`--plain`) as
//! text on stdout.

use std::path::Path;
use std::process::ExitCode;

use super::ReplayArgs;
use super::stdout_text::out;
use crate::replay::plain::steps_text;
use crate::replay::source;
use crate::tui::{self, app::App};
use tracer_store::Store;

pub async fn run(db: &Path, args: ReplayArgs) -> anyhow::Result<ExitCode> {
    if !args.plain {
        tui::require_terminal("replay")?;
    }
    let (trace, source_name) = if source::is_file(&args.trace) {
        (source::from_file(&args.trace).await?, args.trace.clone())
    } else {
        let store = Store::open_existing(db).await?;
        let trace = source::from_store(&store, &args.trace).await;
        store.close().await;
        (trace?, db.display().to_string())
    };
    if args.plain {
        out!("{}", steps_text(&trace))?;
        return Ok(ExitCode::SUCCESS);
    }
    let app = App::replay(source_name, trace, args.speed);
    tui::run(app, None, std::env::current_dir()?).await?;
    Ok(ExitCode::SUCCESS)
}
