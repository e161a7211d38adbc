//! A WebSocket hop in HAR as Chromium's devtools write one: `_resourceType: "websocket"` and
//! `_webSocketMessages`, each `{type: "send"|"receive", time: seconds since the epoch, opcode,
//! data}` (text as it is, anything else base64); tracer adds the sizes it counted.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use tracer_trace::RecordedHop;
use tracer_wire::hop::ws_message::opcode;

/// Adds the hop's messages to its entry, when it was a WebSocket.
pub(crate) fn add_messages(entry: &mut Value, hop: &RecordedHop) {
    let Some(record) = hop.end.as_ref().and_then(|e| e.websocket.as_ref()) else {
        return;
    };
    let messages: Vec<Value> = record
        .messages
        .iter()
        .map(|m| {
            let text = (m.opcode == opcode::TEXT)
                .then(|| std::str::from_utf8(&m.data).ok())
                .flatten();
            let data = match text {
                Some(text) => text.to_string(),
                None => STANDARD.encode(&m.data),
            };
            let mut message = json!({
                "type": m.direction.as_str(),
                "time": m.at_unix_ns as f64 / 1e9,
                "opcode": m.opcode,
                "data": data,
                "_size": m.size,
                "_wireSize": m.wire_size,
            });
            if m.truncated() {
                message["_truncated"] = json!(true);
            }
            message
        })
        .collect();
    if let Some(object) = entry.as_object_mut() {
        object.insert("_resourceType".into(), json!("websocket"));
        object.insert("_webSocketMessages".into(), json!(messages));
        if record.not_listed > 0 {
            object.insert(
                "_webSocketMessagesNotListed".into(),
                json!(record.not_listed),
            );
        }
    }
    // The frames are the record: no request body to show for the GET.
    if let Some(request) = entry.get_mut("request").and_then(Value::as_object_mut) {
        request.remove("postData");
    }
}
