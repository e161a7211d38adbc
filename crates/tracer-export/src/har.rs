//! HAR 1.2: one entry per hop, timings from the recorded timestamps, one page per trace.

use serde_json::{Map, Value, json};

use super::body_text::{BodyText, TraceToExport, iso8601_utc};
use tracer_trace::{Direction, RecordedHop, explain_trace};
use tracer_wire::content_encoding::ReadableBody;
use tracer_wire::hop::{BodyCapture, Header, HopState, Transport, header_text};

/// A HAR 1.2 document of the given traces (one `pages` entry per trace, entries by start time).
pub fn har_document(traces: &[TraceToExport<'_>]) -> Value {
    let mut pages = Vec::new();
    let mut entries: Vec<(i64, Value)> = Vec::new();
    for trace in traces {
        let started = trace.hops.iter().map(|h| h.start.started_unix_ns).min();
        let page_id = format!("trace_{}", trace.id);
        pages.push(json!({
            "startedDateTime": iso8601_utc(started.unwrap_or(0)),
            "id": page_id,
            "title": trace.title.unwrap_or(trace.id),
            "pageTimings": {},
        }));
        let explained = explain_trace(trace.hops);
        // A Responses turn read from a WebSocket's messages is in that hop's `_webSocketMessages`.
        let wire_hops = trace.hops.iter().enumerate();
        for (index, hop) in
            wire_hops.filter(|(_, h)| !tracer_trace::read::ws_turns::is_turn(&h.start))
        {
            let words = |direction: Direction| {
                explained
                    .iter()
                    .find(|m| m.hop_index == index && m.direction == direction && m.part.is_none())
            };
            let mut entry = har_entry(hop);
            if let Some(object) = entry.as_object_mut() {
                object.insert("pageref".into(), json!(page_id));
                if let Some(request) = words(Direction::Request) {
                    object.insert("comment".into(), json!(request.line()));
                    object.insert("_number".into(), json!(request.number));
                    object.insert("_explanation".into(), json!(request.explanation));
                    object.insert("_dialect".into(), json!(request.dialect));
                }
                if let Some(response) = words(Direction::Response) {
                    object.insert("_responseSummary".into(), json!(response.line()));
                    object.insert("_responseExplanation".into(), json!(response.explanation));
                }
            }
            entries.push((hop.start.started_unix_ns, entry));
        }
    }
    entries.sort_by_key(|(at, _)| *at);
    json!({
        "log": {
            "version": "1.2",
            "creator": { "name": "tracer", "version": env!("CARGO_PKG_VERSION") },
            "pages": pages,
            "entries": entries.into_iter().map(|(_, e)| e).collect::<Vec<_>>(),
        }
    })
}

/// Milliseconds between two Unix-nanosecond instants, never negative.
fn ms_between(from: i64, to: i64) -> f64 {
    ((to - from).max(0) as f64) / 1e6
}

/// `send`, `wait`, `receive` from the recorded timestamps; each non-negative.
pub(crate) fn timings(hop: &RecordedHop) -> (f64, f64, f64) {
    let start = hop.start.started_unix_ns;
    let Some(end) = hop.end.as_ref() else {
        return (0.0, 0.0, 0.0);
    };
    let head = end
        .response_head_unix_ns
        .or(end.response_first_byte_unix_ns)
        .or(end.response_ended_unix_ns);
    let finished = end.response_ended_unix_ns.or(head);
    // A request still being sent when the head came back (streaming uploads) ends its send there.
    let sent = match (end.request_ended_unix_ns, head) {
        (Some(sent), Some(head)) => sent.min(head),
        (Some(sent), None) => sent,
        (None, Some(head)) => head,
        (None, None) => start,
    };
    let send = ms_between(start, sent);
    let wait = head.map_or(0.0, |head| ms_between(sent, head));
    let receive = match (head, finished) {
        (Some(head), Some(done)) => ms_between(head, done),
        _ => 0.0,
    };
    (send, wait, receive)
}

fn headers(list: &[Header]) -> Vec<Value> {
    list.iter()
        .map(|h| json!({ "name": h.name, "value": String::from_utf8_lossy(&h.value) }))
        .collect()
}

fn mime_type(list: &[Header], body: &BodyCapture) -> String {
    match header_text(list, "content-type") {
        Some(value) => value.to_string(),
        None if body.bytes.is_empty() => String::new(),
        None => "application/octet-stream".to_string(),
    }
}

fn query_string(path: &str) -> Vec<Value> {
    let Some((_, query)) = path.split_once('?') else {
        return Vec::new();
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            json!({ "name": name, "value": value })
        })
        .collect()
}

/// An absolute URL for the request: the upstream URL, or `stdio://route` for wrapped servers.
fn request_url(hop: &RecordedHop) -> String {
    let start = &hop.start;
    if start.transport == Transport::Stdio {
        return format!("stdio://{}/", start.route);
    }
    if start.url.starts_with("http://") || start.url.starts_with("https://") {
        start.url.clone()
    } else if start.method == "CONNECT" {
        // A forward-proxy tunnel: its target is `host:port`.
        format!("https://{}/", start.path)
    } else {
        format!("http://{}{}", start.route, start.path)
    }
}

/// A cut capture, and a `Content-Encoding` undone (or not), said in the fields' `comment`.
fn truncation_note(
    body: &BodyCapture,
    readable: &ReadableBody<'_>,
    fields: &mut Map<String, Value>,
) {
    let mut comments = Vec::new();
    if body.truncated {
        fields.insert("_truncated".into(), json!(true));
        comments.push(format!(
            "only the first {} of {} bytes were recorded",
            body.bytes.len(),
            body.total_len
        ));
    }
    if let Some(note) = readable.note() {
        comments.push(note);
    }
    if !comments.is_empty() {
        fields.insert("comment".into(), json!(comments.join("; ")));
    }
}

/// One HAR entry for one hop.
pub fn har_entry(hop: &RecordedHop) -> Value {
    let start = &hop.start;
    let end = hop.end.as_ref();
    let empty = BodyCapture::default();
    let request_body = end.map_or(&empty, |e| &e.request_body);
    let response_body = end.map_or(&empty, |e| &e.response_body);
    let response_headers = end.map_or(&[][..], |e| e.response_headers.as_slice());

    let mut request = Map::new();
    request.insert("method".into(), json!(start.method));
    request.insert("url".into(), json!(request_url(hop)));
    request.insert("httpVersion".into(), json!("HTTP/1.1"));
    request.insert("cookies".into(), json!([]));
    request.insert("headers".into(), json!(headers(&start.request_headers)));
    request.insert("queryString".into(), json!(query_string(&start.path)));
    if !request_body.bytes.is_empty() || request_body.total_len > 0 {
        let (body, readable) = BodyText::readable(&start.request_headers, request_body);
        let mut post = Map::new();
        post.insert(
            "mimeType".into(),
            json!(mime_type(&start.request_headers, request_body)),
        );
        post.insert("text".into(), json!(body.text()));
        if body.is_base64() {
            post.insert("_encoding".into(), json!("base64"));
        }
        truncation_note(request_body, &readable, &mut post);
        request.insert("postData".into(), Value::Object(post));
    }
    request.insert("headersSize".into(), json!(-1));
    request.insert("bodySize".into(), json!(request_body.total_len));

    let status = end.and_then(|e| e.status);
    // HAR's `content` is the decoded content: `text` decoded, `size` its length, `compression`
    // the bytes the coding saved; `bodySize` stays the bytes on the wire.
    let (body, readable) = BodyText::readable(response_headers, response_body);
    let mut content = Map::new();
    let decoded_len = readable.body.total_len;
    content.insert("size".into(), json!(decoded_len));
    if readable.was_decoded() && !readable.stopped_short() && !response_body.truncated {
        content.insert(
            "compression".into(),
            json!(decoded_len as i64 - response_body.total_len as i64),
        );
    }
    content.insert(
        "mimeType".into(),
        json!(mime_type(response_headers, response_body)),
    );
    content.insert("text".into(), json!(body.text()));
    if body.is_base64() {
        content.insert("encoding".into(), json!("base64"));
    }
    truncation_note(response_body, &readable, &mut content);
    let status_text = status
        .and_then(|s| http::StatusCode::from_u16(s).ok())
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut response = Map::new();
    response.insert("status".into(), json!(status.unwrap_or(0)));
    response.insert("statusText".into(), json!(status_text));
    response.insert("httpVersion".into(), json!("HTTP/1.1"));
    response.insert("cookies".into(), json!([]));
    response.insert("headers".into(), json!(headers(response_headers)));
    response.insert("content".into(), Value::Object(content));
    response.insert(
        "redirectURL".into(),
        json!(header_text(response_headers, "location").unwrap_or("")),
    );
    response.insert("headersSize".into(), json!(-1));
    response.insert(
        "bodySize".into(),
        json!(end.map_or(-1, |_| response_body.total_len as i64)),
    );
    if let Some(error) = end.and_then(|e| e.error.as_ref()) {
        response.insert("_error".into(), json!(error));
    }
    if let Some(note) = end.and_then(|e| e.note.as_ref()) {
        response.insert("_note".into(), json!(note));
    }

    let (send, wait, receive) = timings(hop);
    let state = end.and_then(|e| e.state).unwrap_or(HopState::InFlight);
    let chunks: Vec<Value> = end.map_or_else(Vec::new, |e| {
        e.chunks
            .iter()
            .map(|c| json!({ "offsetMs": c.offset_ns as f64 / 1e6, "size": c.size }))
            .collect()
    });
    let mut entry = json!({
        "startedDateTime": iso8601_utc(start.started_unix_ns),
        "time": send + wait + receive,
        "request": request,
        "response": response,
        "cache": {},
        "timings": { "blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": send, "wait": wait, "receive": receive },
        "_hopId": start.id,
        "_route": start.route,
        "_role": start.role.as_str(),
        "_transport": start.transport.as_str(),
        "_state": state.as_str(),
        "_chunks": chunks,
    });
    super::har_ws::add_messages(&mut entry, hop);
    entry
}
