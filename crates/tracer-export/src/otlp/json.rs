//! OTLP/JSON encoding of the span model: an `ExportTraceServiceRequest` as the OTLP spec writes
//! it (hex ids, integer enums, 64-bit integers as decimal strings, lowerCamelCase keys).

use serde_json::{Value, json};

use super::model::{AttrValue, Attribute, Resource, SCOPE_NAME, SCOPE_VERSION, Span};

/// OTLP status code ERROR.
const STATUS_ERROR: u8 = 2;

/// `{"resourceSpans": [...]}` holding `spans` under one resource and one scope.
pub(crate) fn document(resource: &Resource, spans: &[Span]) -> Value {
    let spans: Vec<Value> = spans.iter().map(span).collect();
    json!({
        "resourceSpans": [{
            "resource": { "attributes": attributes(&resource.attributes) },
            "scopeSpans": [{
                "scope": { "name": SCOPE_NAME, "version": SCOPE_VERSION },
                "spans": spans,
            }],
        }]
    })
}

fn span(span: &Span) -> Value {
    let events: Vec<Value> = span
        .events
        .iter()
        .map(|e| {
            json!({
                "timeUnixNano": e.at_unix_ns.to_string(),
                "name": e.name,
                "attributes": attributes(&e.attributes),
            })
        })
        .collect();
    let status = match &span.error {
        Some(message) => json!({ "code": STATUS_ERROR, "message": message }),
        None => json!({}),
    };
    let mut out = json!({
        "traceId": span.trace_id,
        "spanId": span.span_id,
    });
    if let (Some(parent), Some(object)) = (&span.parent_span_id, out.as_object_mut()) {
        object.insert("parentSpanId".into(), json!(parent));
    }
    if let Some(object) = out.as_object_mut() {
        object.insert("name".into(), json!(span.name));
        object.insert("kind".into(), json!(span.kind as u8));
        object.insert(
            "startTimeUnixNano".into(),
            json!(span.start_unix_ns.to_string()),
        );
        object.insert(
            "endTimeUnixNano".into(),
            json!(span.end_unix_ns.to_string()),
        );
        object.insert("attributes".into(), attributes(&span.attributes));
        object.insert("events".into(), Value::Array(events));
        object.insert("status".into(), status);
    }
    out
}

fn attributes(attributes: &[Attribute]) -> Value {
    Value::Array(
        attributes
            .iter()
            .map(|a| json!({ "key": a.key, "value": value(&a.value) }))
            .collect(),
    )
}

fn value(value: &AttrValue) -> Value {
    match value {
        AttrValue::Str(text) => json!({ "stringValue": text }),
        AttrValue::Int(n) => json!({ "intValue": n.to_string() }),
        AttrValue::Double(x) => json!({ "doubleValue": x }),
        AttrValue::Bool(b) => json!({ "boolValue": b }),
        AttrValue::Strs(values) => {
            let values: Vec<Value> = values.iter().map(|v| json!({ "stringValue": v })).collect();
            json!({ "arrayValue": { "values": values } })
        }
    }
}
