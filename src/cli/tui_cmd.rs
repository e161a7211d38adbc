//! `tracer tui`: the live trace browser over a database.

use std::path::Path;
use std::process::ExitCode;

use super::TuiArgs;
use crate::store::Store;
use crate::tui::{self, app::App};

pub async fn run(db: &Path, args: TuiArgs) -> anyhow::Result<ExitCode> {
    tui::require_terminal("tui")?;
    let store = Store::open_existing(db).await?;
    tracing::info!("tui on {}", db.display());
    let app = App::browser(db.display().to_string());
    let outcome = tui::run(app, Some(store.clone()), args.export_dir).await;
    store.close().await;
    outcome?;
    Ok(ExitCode::SUCCESS)
}
