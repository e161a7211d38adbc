//! Where a compared run comes from: a trace in the database (id or prefix) or a hop-log file,
//! loaded as replay loads it (`replay::source`), seen as a run of steps.

use crate::replay::source::{self, SourceError};
use tracer_live::load::LoadedTrace;
use tracer_store::Store;

use super::steps::{RunView, run_view};

/// Whether `what` names a hop-log file rather than a trace id.
pub fn is_file(what: &str) -> bool {
    source::is_file(what)
}

/// Reads a run from a hop-log file, or from the store when `what` is a trace id or prefix.
pub async fn load_run(store: Option<&Store>, what: &str) -> Result<RunView, SourceError> {
    Ok(view_of(&source::from_file_or_store(store, what).await?))
}

/// Reads a run from the store only (a trace id or prefix), never from a file: for `tracer mcp`,
/// whose arguments come from a model.
pub async fn load_stored_run(store: &Store, id_or_prefix: &str) -> Result<RunView, SourceError> {
    Ok(view_of(&source::from_store(store, id_or_prefix).await?))
}

pub fn view_of(loaded: &LoadedTrace) -> RunView {
    run_view(loaded.id(), loaded.row.title.clone(), &loaded.hops)
}
