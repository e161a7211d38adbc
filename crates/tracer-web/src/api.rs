//! The page's JSON API (docs/ui.md): the same listings, search, hop log and diff the CLI prints
//! with `--json`, a message with its body, a trace's exports, and the live events.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::events::EventHub;
use crate::options::DiffTraces;
use crate::trace_cache::TraceCache;
use tracer_export::body_text::TraceToExport;
use tracer_export::har::har_document;
use tracer_export::hop_log::{Bodies as LogBodies, HopLog};
use tracer_export::html::html_page;
use tracer_export::listing::{list_sessions, list_traces_page, search_json};
use tracer_export::mermaid::markdown_handout;
use tracer_live::load::{Bodies, load_trace};
use tracer_store::{Store, StoreError};

/// Traces in one page of the listing at most.
const PAGE_MAX: i64 = 1_000;

/// What every route reads.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) cache: TraceCache,
    pub(crate) hub: EventHub,
    pub(crate) diff: Option<Arc<dyn DiffTraces>>,
}

type Api = State<Arc<Shared>>;

/// A failed request: its status and words, as `{"error": "..."}`.
pub(crate) struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        let status = match &error {
            StoreError::UnknownTrace(_) | StoreError::NotFound(_) => StatusCode::NOT_FOUND,
            StoreError::AmbiguousTrace(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError(status, error.to_string())
    }
}

#[derive(Deserialize)]
pub(crate) struct Page {
    offset: Option<i64>,
    limit: Option<i64>,
}

/// `/api/traces?offset&limit`: `{"total", "traces": [as tracer ls --json]}`, newest first.
pub(crate) async fn traces(
    State(api): Api,
    Query(page): Query<Page>,
) -> Result<Json<Value>, ApiError> {
    let offset = page.offset.unwrap_or(0).max(0);
    let limit = page.limit.unwrap_or(200).clamp(0, PAGE_MAX);
    let total = api.store.trace_count().await?;
    let traces = list_traces_page(&api.store, offset, limit).await?;
    Ok(Json(
        json!({"total": total, "offset": offset, "traces": traces}),
    ))
}

/// `/api/sessions?limit`: as `tracer ls --sessions --json`.
pub(crate) async fn sessions(
    State(api): Api,
    Query(page): Query<Page>,
) -> Result<Json<Value>, ApiError> {
    let limit = page.limit.unwrap_or(200).clamp(0, PAGE_MAX);
    let sessions = list_sessions(&api.store, limit).await?;
    Ok(Json(serde_json::to_value(sessions).unwrap_or(Value::Null)))
}

#[derive(Deserialize)]
pub(crate) struct SearchQuery {
    q: Option<String>,
    limit: Option<usize>,
}

/// `/api/search?q`: as `tracer search --json` (titles, user words, model text, tool calls and
/// results, bodies).
pub(crate) async fn search(
    State(api): Api,
    Query(query): Query<SearchQuery>,
) -> Result<Json<Value>, ApiError> {
    let text = query.q.unwrap_or_default();
    if text.trim().is_empty() {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "nothing to search for: give q=TEXT".into(),
        ));
    }
    let limit = query.limit.unwrap_or(50).min(1_000);
    let report = tracer_live::search::search(&api.store, &text, limit).await?;
    Ok(Json(search_json(&report)))
}

/// `/api/trace/ID`: the hop log, bodies as lengths only, with the page's `ui` extras.
pub(crate) async fn trace(State(api): Api, Path(id): Path<String>) -> Result<Response, ApiError> {
    let built = api.cache.get(&api.store, &id).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        built.document.clone(),
    )
        .into_response())
}

/// `/api/trace/ID/message/N`: one message with its body and events.
pub(crate) async fn message(
    State(api): Api,
    Path((id, number)): Path<(String, u64)>,
) -> Result<Json<Value>, ApiError> {
    let built = api.cache.get(&api.store, &id).await?;
    match crate::message::message(&api.store, &built, number).await? {
        Some(message) => Ok(Json(message)),
        None => Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("trace {id} has no message {number}"),
        )),
    }
}

/// `/api/trace/ID/message/N/changes`: what changed since the previous model request.
pub(crate) async fn changes(
    State(api): Api,
    Path((id, number)): Path<(String, u64)>,
) -> Result<Json<Value>, ApiError> {
    let built = api.cache.get(&api.store, &id).await?;
    match crate::message::changes(&api.store, &built, number).await? {
        Some(changes) => Ok(Json(changes)),
        None => Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("trace {id} has no message {number}"),
        )),
    }
}

#[derive(Deserialize)]
pub(crate) struct DiffQuery {
    a: String,
    b: String,
}

/// `/api/diff?a&b`: `{"json": tracer diff --json, "text": tracer diff}`.
pub(crate) async fn diff(
    State(api): Api,
    Query(query): Query<DiffQuery>,
) -> Result<Json<Value>, ApiError> {
    let Some(differ) = &api.diff else {
        return Err(ApiError(
            StatusCode::NOT_IMPLEMENTED,
            "this server compares no traces".into(),
        ));
    };
    let page = differ
        .diff(&api.store, &query.a, &query.b)
        .await
        .map_err(|why| ApiError(StatusCode::BAD_REQUEST, why))?;
    Ok(Json(json!({"json": page.json, "text": page.text})))
}

#[derive(Deserialize)]
pub(crate) struct ExportQuery {
    format: Option<String>,
}

/// `/api/trace/ID/export?format=html|md|json|har`: the file `tracer export` writes, to save.
pub(crate) async fn export(
    State(api): Api,
    Path(id): Path<String>,
    Query(query): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let format = query.format.unwrap_or_else(|| "html".into());
    let (extension, content_type) = match format.as_str() {
        "html" => ("html", "text/html; charset=utf-8"),
        "md" => ("md", "text/markdown; charset=utf-8"),
        "json" => ("json", "application/json"),
        "har" => ("har", "application/json"),
        other => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                format!("no export format `{other}` here: html, md, json or har"),
            ));
        }
    };
    let trace = load_trace(&api.store, &id, Bodies::Kept).await?;
    let log = HopLog::from_loaded(
        &trace,
        if format == "json" {
            LogBodies::Kept
        } else {
            LogBodies::LengthsOnly
        },
    );
    let view = TraceToExport {
        fetch: None,
        id: log.trace_id(),
        title: log.title(),
        hops: &trace.hops,
        session: log.session(),
        agent_events: &[],
    };
    let text = match format.as_str() {
        "json" => log.to_json_pretty(),
        "har" => serde_json::to_string_pretty(&har_document(&[view])).unwrap_or_default(),
        "md" => markdown_handout(&view),
        _ => html_page(&view),
    };
    let short: String = trace.id().chars().take(8).collect();
    let disposition = format!("attachment; filename=\"trace-{short}.{extension}\"");
    Ok((
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        text,
    )
        .into_response())
}

/// `/api/events`: Server-Sent Events (`trace`, `hop`, `stream`, `reset`), resumed from
/// `Last-Event-ID`.
pub(crate) async fn events(State(api): Api, headers: HeaderMap) -> Response {
    let last = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok());
    api.hub.sse(last).into_response()
}
