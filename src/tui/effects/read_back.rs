//! The trace view's reads back (`Effect::LoadBody`, `Effect::LoadChanges`): a request body let go
//! of when the trace was read, fetched by its hop's id and made into the detail pane's lines here,
//! off the render loop; a call's changes compared from its body and its previous call's.

use crate::tui::action::Action;
use tracer_store::Store;
use tracer_trace::read::conversation_pairs::request_json;
use tracer_trace::read::request_changes::request_changes;

/// One hop's request body, as the detail pane draws it.
pub async fn body(store: &Store, trace_id: String, hop_id: String) -> Action {
    let lines = match store.hop_by_id(&hop_id).await {
        Ok(stored) => {
            crate::tui::view::body_part(&stored.start.request_headers, &stored.end.request_body)
        }
        Err(error) => {
            tracing::warn!(%error, "reading a request body back");
            vec![ratatui::text::Line::from(format!(
                "(the body could not be read back: {error})"
            ))]
        }
    };
    Action::BodyLoaded {
        trace_id,
        hop_id,
        lines,
    }
}

/// What changed in a call's request since its previous call's, both bodies read back.
pub async fn changes(
    store: &Store,
    trace_id: String,
    hop_id: String,
    previous_hop_id: Option<String>,
) -> Action {
    let body = json(store, &hop_id).await;
    let body_bytes = body.as_ref().map_or(0, |b| b.to_string().len());
    let changes = match (previous_hop_id, &body) {
        (Some(previous), Some(body)) => json(store, &previous)
            .await
            .map(|was| request_changes(&was, body)),
        _ => None,
    };
    Action::ChangesLoaded {
        trace_id,
        hop_id,
        changes,
        body_bytes,
    }
}

/// A hop's request body read back as JSON (its coding undone).
async fn json(store: &Store, hop_id: &str) -> Option<serde_json::Value> {
    match store.hop_by_id(hop_id).await {
        Ok(stored) => request_json(&tracer_live::load::recorded(stored)),
        Err(error) => {
            tracing::warn!(%error, "reading a request body back");
            None
        }
    }
}
