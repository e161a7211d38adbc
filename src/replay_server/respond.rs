//! The replay server's answers: a recorded response (JSON-RPC ids set to the request's, streamed
//! at the recorded pace when asked), or a JSON error naming the closest recording.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};

use super::matching::{Difference, RequestKey};
use super::{MatchKind, Pace, Recording, ReplayServer};
use tracer_wire::hop::{Chunk, header_text};

pub type ReplayBody = BoxBody<Bytes, Infallible>;

/// Response headers not copied from the recording: the new connection sets its own.
const NOT_REPLAYED: [&str; 6] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "date",
    "mcp-session-id",
];

/// An answer, before it becomes an HTTP response.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    /// The recorded chunking, when the body is the recorded one byte for byte.
    pub chunks: Vec<Chunk>,
}

impl Reply {
    fn json(status: u16, body: &Value) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), b"application/json".to_vec())],
            body: serde_json::to_vec_pretty(body).unwrap_or_default(),
            chunks: Vec::new(),
        }
    }

    /// The body as JSON, for errors and tests.
    pub fn json_body(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    }

    /// The HTTP response; with `Pace::Recorded` a chunked body keeps its recorded timing.
    pub fn into_response(self, pace: Pace) -> http::Response<ReplayBody> {
        let mut builder = http::Response::builder().status(self.status);
        for (name, value) in &self.headers {
            builder = builder.header(name.as_str(), value.as_slice());
        }
        let paced = pace == Pace::Recorded
            && self.chunks.len() > 1
            && self.chunks.iter().map(|c| c.size).sum::<u64>() == self.body.len() as u64;
        let body = if paced {
            paced_body(self.body, self.chunks)
        } else {
            Full::new(Bytes::from(self.body)).boxed()
        };
        builder
            .body(body)
            .unwrap_or_else(|_| http::Response::new(Full::new(Bytes::new()).boxed()))
    }
}

/// A body that sends each recorded chunk at its recorded offset after the head.
fn paced_body(body: Vec<u8>, chunks: Vec<Chunk>) -> ReplayBody {
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    let body = Bytes::from(body);
    tokio::spawn(async move {
        let started = tokio::time::Instant::now();
        let mut at = 0usize;
        for chunk in chunks {
            let offset = Duration::from_nanos(u64::try_from(chunk.offset_ns).unwrap_or(0));
            tokio::time::sleep_until(started + offset).await;
            let end = (at + chunk.size as usize).min(body.len());
            if tx.send(body.slice(at..end)).await.is_err() {
                return;
            }
            at = end;
        }
    });
    let frames = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(Frame::data(bytes)), rx))
    });
    StreamBody::new(frames).boxed()
}

fn route_list(server: &ReplayServer) -> Vec<String> {
    let mut routes: Vec<String> = server
        .recordings
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    routes.dedup();
    routes
}

/// No recording has this method and path.
pub(super) fn no_route(server: &ReplayServer, method: &str, path: &str) -> Reply {
    Reply::json(
        404,
        &json!({
            "error": format!("no recorded {} request is {method} {path}", server.role),
            "role": server.role.as_str(),
            "trace": server.trace_id,
            "request": { "method": method, "path": path },
            "recorded": route_list(server),
        }),
    )
}

/// Recordings share the method and path, but none carries this request's conversation.
pub(super) fn no_match(
    server: &ReplayServer,
    method: &str,
    path: &str,
    closest: Option<(usize, Vec<Difference>)>,
) -> Reply {
    let closest = closest.map(|(index, diffs)| {
        let recording = &server.recordings[index];
        json!({
            "hop": recording.number,
            "method": recording.method,
            "path": recording.path,
            "carries": describe_key(&recording.key),
            "differences": diffs.iter().map(|d| d.words.clone()).collect::<Vec<_>>(),
        })
    });
    let first = closest
        .as_ref()
        .and_then(|c| c["differences"].get(0))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Reply::json(
        422,
        &json!({
            "error": format!("no recorded {method} {path} carries this request ({first})"),
            "role": server.role.as_str(),
            "trace": server.trace_id,
            "request": { "method": method, "path": path },
            "closest": closest,
        }),
    )
}

/// A request body that could not be read.
pub(super) fn bad_body(reason: &str) -> Reply {
    Reply::json(
        413,
        &json!({ "error": format!("the request body could not be read: {reason}") }),
    )
}

fn describe_key(key: &RequestKey) -> String {
    match key {
        RequestKey::Chat { turns, .. } => turns
            .iter()
            .map(|t| t.role.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        RequestKey::Mcp { method, tool, .. } => {
            let method = method.clone().unwrap_or_else(|| "(a response)".into());
            match tool {
                Some(tool) => format!("{method} {tool}"),
                None => method,
            }
        }
        RequestKey::Raw(bytes) => format!("{} bytes", bytes.len()),
    }
}

/// The recorded response to a matched request.
pub(super) fn recorded(
    trace_id: &str,
    recording: &Recording,
    kind: MatchKind,
    request_body: &[u8],
) -> Reply {
    let mut headers: Vec<(String, Vec<u8>)> = recording
        .headers
        .iter()
        .filter(|h| !NOT_REPLAYED.iter().any(|n| h.name.eq_ignore_ascii_case(n)))
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    headers.push((
        "x-tracer-replay".into(),
        format!("trace {trace_id} hop {}", recording.number).into_bytes(),
    ));
    let kind_text = match kind {
        MatchKind::Exact => "exact",
        MatchKind::ToolResultsDiffer => "tool-results-differ",
    };
    headers.push((
        "x-tracer-replay-match".into(),
        kind_text.as_bytes().to_vec(),
    ));
    let mut body = recording.body.clone();
    let mut chunks = recording.chunks.clone();
    if matches!(recording.key, RequestKey::Mcp { .. })
        && let Some(id) = request_id(request_body)
    {
        let sse = header_text(&recording.headers, "content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let rewritten = with_id(&body, &id, sse);
        if rewritten != body {
            body = rewritten;
            chunks.clear();
        }
    }
    Reply {
        status: recording.status,
        headers,
        body,
        chunks,
    }
}

fn request_id(body: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Value>(body)
        .ok()?
        .get("id")
        .filter(|id| !id.is_null())
        .cloned()
}

fn set_id(value: &mut Value, id: &Value) -> bool {
    match value.as_object_mut() {
        Some(object)
            if object.contains_key("id")
                && (object.contains_key("result") || object.contains_key("error")) =>
        {
            object.insert("id".into(), id.clone());
            true
        }
        _ => false,
    }
}

/// The response with its JSON-RPC id set to the request's (in a JSON body or SSE `data:` lines).
fn with_id(body: &[u8], id: &Value, sse: bool) -> Vec<u8> {
    if !sse {
        let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
            return body.to_vec();
        };
        return if set_id(&mut value, id) {
            serde_json::to_vec(&value).unwrap_or_default()
        } else {
            body.to_vec()
        };
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return body.to_vec();
    };
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\r', '\n']);
        let ending = &line[content.len()..];
        if let Some(data) = content.strip_prefix("data:")
            && let Ok(mut value) = serde_json::from_str::<Value>(data.trim_start())
            && set_id(&mut value, id)
        {
            out.push_str("data: ");
            out.push_str(&value.to_string());
            out.push_str(ending);
        } else {
            out.push_str(line);
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_request_in_json_and_sse() {
        let id = json!(7);
        let json_body = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;
        assert_eq!(
            with_id(json_body, &id, false),
            br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#.to_vec()
        );
        let sse = b"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r\n\r\n";
        let out = String::from_utf8(with_id(sse, &id, true)).unwrap();
        assert_eq!(
            out,
            "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\r\n\r\n"
        );
        assert_eq!(with_id(b"not json", &id, false), b"not json".to_vec());
    }
}
