//! One record of an agent's own telemetry (an OpenTelemetry log event, span or metric point the
//! agent exported to tracer): its name, time and join keys, and the record as OTLP/JSON. Pure.
//!
//! The keys are the ids the agent shares with the wire: its session (`session.id`, Codex's
//! `conversation.id`), prompt (`prompt.id`, `prompt_id`), API request (`request_id`, the
//! response's `request-id` header) and tool call (`tool_use_id`, `call_id`).

use serde_json::{Map, Value};

/// Which OpenTelemetry signal carried the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    Log,
    Span,
    Metric,
}

impl Signal {
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Log => "log",
            Signal::Span => "span",
            Signal::Metric => "metric",
        }
    }

    pub fn parse(text: &str) -> Option<Signal> {
        match text {
            "log" => Some(Signal::Log),
            "span" => Some(Signal::Span),
            "metric" => Some(Signal::Metric),
            _ => None,
        }
    }
}

/// The ids an event shares with the wire, read from its attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinKeys {
    pub session: Option<String>,
    pub prompt: Option<String>,
    pub request: Option<String>,
    pub tool_call: Option<String>,
    /// The agent's own order of its events (`event.sequence`).
    pub sequence: Option<i64>,
}

const SESSION_KEYS: [&str; 4] = [
    "session.id",
    "conversation.id",
    "session_id",
    "conversation_id",
];
const PROMPT_KEYS: [&str; 3] = ["prompt.id", "prompt_id", "user_prompt_id"];
const REQUEST_KEYS: [&str; 4] = [
    "request_id",
    "request.id",
    "response_id",
    "gen_ai.response.id",
];
const TOOL_CALL_KEYS: [&str; 4] = ["tool_use_id", "call_id", "tool_call_id", "function_call_id"];

impl JoinKeys {
    /// The keys in a flat attribute map (the record's own attributes, then its resource's).
    pub fn read(attributes: &Map<String, Value>, resource: &Map<String, Value>) -> JoinKeys {
        let text = |names: &[&str]| {
            names.iter().find_map(|name| {
                (attributes.get(*name).or_else(|| resource.get(*name)))
                    .and_then(scalar_text)
                    .filter(|text| !text.is_empty())
            })
        };
        JoinKeys {
            session: text(&SESSION_KEYS),
            prompt: text(&PROMPT_KEYS),
            request: text(&REQUEST_KEYS),
            tool_call: text(&TOOL_CALL_KEYS),
            sequence: attributes.get("event.sequence").and_then(|v| match v {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.parse().ok(),
                _ => None,
            }),
        }
    }
}

/// A string or a number as text (ids sent as either).
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// One record as tracer keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEvent {
    pub signal: Signal,
    /// The resource's `service.name` (`claude-code`, `codex_exec`, `gemini-cli`).
    pub service: Option<String>,
    /// The event's name (`tool_decision`, `codex.tool_result`, `gemini_cli.tool_call`), the
    /// span's or the metric's.
    pub name: String,
    /// When the agent says it happened (a span's start).
    pub time_unix_ns: i64,
    /// A span's end.
    pub end_unix_ns: Option<i64>,
    pub keys: JoinKeys,
    /// `{"resource": …, "scope": …, "log"|"span"|"metric"+"point": …}` in OTLP/JSON.
    pub record: Value,
}

impl AgentEvent {
    /// An event from flat attributes (as the hop log and Claude Code's transcript carry them):
    /// its record written as an OTLP/JSON log record, its keys read from the attributes.
    pub fn from_attributes(
        service: &str,
        name: &str,
        time_unix_ns: i64,
        attributes: &Map<String, Value>,
    ) -> AgentEvent {
        let list: Vec<Value> = (attributes.iter())
            .map(|(key, value)| serde_json::json!({"key": key, "value": otlp_value(value)}))
            .collect();
        let resource = [("service.name".to_string(), Value::from(service))]
            .into_iter()
            .collect();
        AgentEvent {
            signal: Signal::Log,
            service: Some(service.to_string()),
            name: name.to_string(),
            time_unix_ns,
            end_unix_ns: None,
            keys: JoinKeys::read(attributes, &resource),
            record: serde_json::json!({
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                "log": {"timeUnixNano": time_unix_ns.to_string(), "attributes": list},
            }),
        }
    }

    /// The record's own attributes, flat (`{"tool_name": "Bash", …}`).
    pub fn attributes(&self) -> Map<String, Value> {
        record_attributes(&self.record)
    }
}

/// The flat attributes of a stored record (its log, span or point's; an empty map otherwise).
pub fn record_attributes(record: &Value) -> Map<String, Value> {
    ["log", "span", "point"]
        .iter()
        .find_map(|part| record.get(*part))
        .and_then(|part| part.get("attributes"))
        .map(flat_attributes)
        .unwrap_or_default()
}

/// The flat attributes of a record's resource.
pub fn resource_attributes(record: &Value) -> Map<String, Value> {
    (record.get("resource"))
        .and_then(|r| r.get("attributes"))
        .map(flat_attributes)
        .unwrap_or_default()
}

/// OTLP/JSON `[{"key": k, "value": {"stringValue": v}}, …]` as `{k: v, …}`.
pub fn flat_attributes(list: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for pair in list.as_array().map(Vec::as_slice).unwrap_or_default() {
        if let Some(key) = pair.get("key").and_then(Value::as_str) {
            out.insert(key.to_string(), any_value(pair.get("value")));
        }
    }
    out
}

/// Plain JSON as an OTLP/JSON `AnyValue` (the inverse of [`any_value`]).
pub fn otlp_value(value: &Value) -> Value {
    use serde_json::json;
    match value {
        Value::Null => json!({}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n}),
        Value::String(s) => json!({"stringValue": s}),
        Value::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(otlp_value).collect::<Vec<_>>()}})
        }
        Value::Object(map) => json!({"kvlistValue": {"values": map.iter()
            .map(|(k, v)| json!({"key": k, "value": otlp_value(v)})).collect::<Vec<_>>()}}),
    }
}

/// An OTLP/JSON `AnyValue` as plain JSON (`{"intValue": "3"}` is `3`).
pub fn any_value(value: Option<&Value>) -> Value {
    let Some(Value::Object(map)) = value else {
        return Value::Null;
    };
    let Some((kind, inner)) = map.iter().next() else {
        return Value::Null;
    };
    match kind.as_str() {
        "intValue" => match inner {
            Value::String(s) => s.parse::<i64>().map(Value::from).unwrap_or(inner.clone()),
            other => other.clone(),
        },
        "arrayValue" => Value::Array(
            (inner.get("values").and_then(Value::as_array))
                .map(|values| values.iter().map(|v| any_value(Some(v))).collect())
                .unwrap_or_default(),
        ),
        "kvlistValue" => {
            Value::Object(flat_attributes(inner.get("values").unwrap_or(&Value::Null)))
        }
        _ => inner.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_come_from_the_attributes_then_the_resource() {
        let record = json!({
            "resource": {"attributes": [{"key": "session.id", "value": {"stringValue": "r-1"}}]},
            "log": {"attributes": [
                {"key": "tool_use_id", "value": {"stringValue": "toolu_1"}},
                {"key": "event.sequence", "value": {"intValue": "7"}},
                {"key": "prompt.id", "value": {"stringValue": "p-1"}},
                {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}},
                {"key": "more", "value": {"kvlistValue": {"values": [{"key": "x", "value": {"boolValue": true}}]}}}
            ]}
        });
        let attributes = record_attributes(&record);
        let keys = JoinKeys::read(&attributes, &resource_attributes(&record));
        assert_eq!(keys.session.as_deref(), Some("r-1"));
        assert_eq!(keys.tool_call.as_deref(), Some("toolu_1"));
        assert_eq!(keys.prompt.as_deref(), Some("p-1"));
        assert_eq!(keys.sequence, Some(7));
        assert_eq!(keys.request, None);
        assert_eq!(attributes["tags"], json!(["a"]));
        assert_eq!(attributes["more"], json!({"x": true}));
        assert_eq!(attributes["event.sequence"], json!(7));
    }

    #[test]
    fn odd_values_read_as_null_not_a_panic() {
        assert_eq!(any_value(None), Value::Null);
        assert_eq!(any_value(Some(&json!({}))), Value::Null);
        assert_eq!(any_value(Some(&json!("bare"))), Value::Null);
        assert_eq!(flat_attributes(&json!({"not": "a list"})), Map::new());
    }

    #[test]
    fn flat_attributes_make_a_record_that_reads_back_the_same() {
        let attributes = json!({"tool_use_id": "toolu_9", "session.id": "s", "n": 3, "ok": true,
            "x": 1.5, "list": ["a", 2], "map": {"k": "v"}});
        let attributes = attributes.as_object().expect("object").clone();
        let event = AgentEvent::from_attributes("claude-code", "tool_result", 7, &attributes);
        assert_eq!(event.attributes(), attributes);
        assert_eq!(event.keys.tool_call.as_deref(), Some("toolu_9"));
        assert_eq!(event.keys.session.as_deref(), Some("s"));
        assert_eq!(
            resource_attributes(&event.record)["service.name"],
            "claude-code"
        );
    }
}
