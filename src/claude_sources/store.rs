//! Writing what a Claude Code source gave into the database: its calls as hops (those the wire
//! already holds, by request id, left out: the wire's record is the better one), its events as
//! agent events; then grouped like any recording.

use serde_json::Value;
use tracer_store::Store;
use tracer_wire::agent_event::AgentEvent;

use super::SourceCall;

/// What an import wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Calls added as hops.
    pub hops: usize,
    /// Calls the wire already held (joined, not added).
    pub on_wire: usize,
    /// Events stored.
    pub events: usize,
}

/// Writes `calls` and `events` (bodies and events redacted when `redact`, each event string
/// cut to `max_value` bytes) and groups the new hops.
pub async fn write(
    store: &Store,
    calls: &[SourceCall],
    events: Vec<AgentEvent>,
    redact: bool,
    max_value: usize,
) -> anyhow::Result<Written> {
    let mut written = Written::default();
    let mut tx = store.pool().begin().await?;
    for call in calls {
        if let Some(id) = &call.request_id
            && store.hop_with_request_id(id).await?.is_some()
        {
            written.on_wire += 1;
            continue;
        }
        let (start, mut end) = call.hop();
        if redact {
            for body in [&mut end.request_body, &mut end.response_body] {
                body.bytes = tracer_wire::redact::redact_json_bytes(&body.bytes);
                body.total_len = body.bytes.len() as u64;
            }
        }
        tracer_store::hops::insert_start(&mut tx, &start).await?;
        tracer_store::hops::apply_end(&mut tx, &end).await?;
        written.hops += 1;
    }
    tx.commit().await?;
    let now = tracer_wire::hop::now_unix_ns();
    let kept: Vec<_> = (events.into_iter())
        .map(|e| tracer_record::agent_telemetry::kept_event(e, redact, max_value, now))
        .collect();
    written.events = store.insert_agent_events(&kept).await?;
    tracer_live::correlate::group_new_hops(store).await?;
    Ok(written)
}

/// A short description of a call for the import's report: its request id or its position.
pub fn named(call: &SourceCall) -> String {
    match (
        &call.request_id,
        call.response.get("model").and_then(Value::as_str),
    ) {
        (Some(id), _) => id.clone(),
        (None, Some(model)) => format!("a call to {model}"),
        (None, None) => "a call".into(),
    }
}
