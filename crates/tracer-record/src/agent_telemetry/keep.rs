//! What is kept of one received record: its secrets redacted by the body rules, and each string
//! in it cut to the body bound (a tool's whole output, a raw API body), the cut said.

use serde_json::Value;
use tracer_store::agent_events::NewAgentEvent;
use tracer_wire::agent_event::AgentEvent;

/// Marks a string the keeper cut: what follows is how many bytes it had.
pub(crate) const CUT_MARK: &str = "…[cut by tracer: ";

/// The event as stored: redacted when `redact`, strings over `max_value` bytes cut.
pub(crate) fn keep(
    mut event: AgentEvent,
    redact: bool,
    max_value: usize,
    received_unix_ns: i64,
    run_id: Option<&str>,
) -> NewAgentEvent {
    let record_bytes = serde_json::to_vec(&event.record).map_or(0, |b| b.len());
    if redact {
        event.record = redacted(&event.record);
    }
    let cut = bound(&mut event.record, max_value);
    NewAgentEvent {
        event,
        received_unix_ns,
        run_id: run_id.map(str::to_string),
        record_bytes,
        cut,
    }
}

/// The record with secret fields' values redacted (`tracer_wire::redact`), also inside the
/// attribute lists (`{"key": "api_key", "value": …}`), whose names are values, not field names.
fn redacted(record: &Value) -> Value {
    let mut record = record.clone();
    redact_pairs(&mut record);
    let Ok(bytes) = serde_json::to_vec(&record) else {
        return record;
    };
    serde_json::from_slice(&tracer_wire::redact::redact_json_bytes(&bytes)).unwrap_or(record)
}

/// `{"key": K, "value": {"stringValue": …}}` with K a secret field name: its value redacted.
fn redact_pairs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let secret = (map.get("key").and_then(Value::as_str))
                .is_some_and(tracer_wire::redact::is_secret_field);
            if secret && let Some(Value::Object(inner)) = map.get_mut("value") {
                for (_, v) in inner.iter_mut() {
                    if v.is_string() {
                        *v = Value::String(tracer_wire::redact::REDACTED.to_string());
                    }
                }
            }
            map.values_mut().for_each(redact_pairs);
        }
        Value::Array(items) => items.iter_mut().for_each(redact_pairs),
        _ => {}
    }
}

/// Cuts every string longer than `max` bytes (on a character boundary); whether any was cut.
fn bound(value: &mut Value, max: usize) -> bool {
    match value {
        Value::String(text) if text.len() > max => {
            let total = text.len();
            let mut end = max;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str(&format!("{CUT_MARK}{total} bytes]"));
            true
        }
        Value::Object(map) => map.values_mut().fold(false, |cut, v| bound(v, max) | cut),
        Value::Array(items) => items.iter_mut().fold(false, |cut, v| bound(v, max) | cut),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tracer_wire::agent_event::{JoinKeys, Signal};

    fn event(record: Value) -> AgentEvent {
        AgentEvent {
            signal: Signal::Log,
            service: None,
            name: "tool_result".into(),
            time_unix_ns: 1,
            end_unix_ns: None,
            keys: JoinKeys::default(),
            record,
        }
    }

    #[test]
    fn secrets_in_attribute_lists_and_fields_are_redacted() {
        let record = json!({"log": {"attributes": [
            {"key": "api_key", "value": {"stringValue": "sk-live-123"}},
            {"key": "tool_name", "value": {"stringValue": "Bash"}},
            {"key": "tool_input", "value": {"kvlistValue": {"values": [
                {"key": "password", "value": {"stringValue": "hunter2"}}]}}}
        ], "body": {"kvlistValue": {"values": []}}, "token": "abc"}});
        let kept = keep(event(record), true, 1024, 5, Some("run-1"));
        let text = kept.event.record.to_string();
        assert!(
            !text.contains("sk-live-123") && !text.contains("hunter2") && !text.contains("abc")
        );
        assert!(text.contains("Bash"));
        assert_eq!(kept.run_id.as_deref(), Some("run-1"));
        let unredacted = keep(event(json!({"token": "abc"})), false, 1024, 5, None);
        assert!(unredacted.event.record.to_string().contains("abc"));
    }

    #[test]
    fn long_strings_are_cut_on_a_character_and_the_cut_said() {
        let long = "é".repeat(100);
        let kept = keep(
            event(json!({"log": {"body": {"stringValue": long}}})),
            true,
            51,
            5,
            None,
        );
        assert!(kept.cut);
        let body = kept
            .event
            .record
            .pointer("/log/body/stringValue")
            .and_then(Value::as_str);
        let body = body.expect("body");
        assert!(body.starts_with(&"é".repeat(25)));
        assert!(body.ends_with("…[cut by tracer: 200 bytes]"));
        assert!(kept.record_bytes > 200);
        let short = keep(event(json!({"a": "b"})), true, 51, 5, None);
        assert!(!short.cut);
    }
}
