//! `tracer tui`: the live trace browser over a database (waiting for it when none is recorded yet).

use std::path::Path;
use std::process::ExitCode;

use super::TuiArgs;
use crate::tui::{self, app::App};
use tracer_store::Store;

pub async fn run(db: &Path, args: TuiArgs) -> anyhow::Result<ExitCode> {
    tui::require_terminal("tui")?;
    tracing::info!("tui on {}", db.display());
    let app = App::browser(db.display().to_string());
    if !db.exists() {
        // Started before the first recording: the list waits for the database to appear
        // (a recorder makes it); nothing is created here.
        tui::run_waiting(app, db.to_path_buf(), args.export_dir).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let store = Store::open_existing(db).await?;
    let outcome = tui::run(app, Some(store.clone()), args.export_dir).await;
    store.close().await;
    outcome?;
    Ok(ExitCode::SUCCESS)
}
