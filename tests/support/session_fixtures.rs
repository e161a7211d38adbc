//! Reads the packed recordings of tests/fixtures/agents/sessions/ (written by
//! tests/interop/agents/pack_session_fixture.py) back into hops, byte-exact, and stores them.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::Value;
use tracer_store::{Store, hops};
use tracer_wire::hop::{BodyCapture, Chunk, Header, HopEnd, HopStart, HopState};

/// One recorded hop: what tracer stored, and the trace the proxy's live grouping gave it.
#[derive(Debug, Clone)]
pub struct PackedHop {
    pub start: HopStart,
    pub end: HopEnd,
    pub live_trace: Option<String>,
}

impl PackedHop {
    pub fn header(&self, name: &str) -> Option<&str> {
        tracer_wire::hop::header_text(&self.start.request_headers, name)
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents")
}

/// The hops of `sessions/NAME.json`, in the order they were stored.
pub fn load(name: &str) -> Vec<PackedHop> {
    load_path(&fixtures().join("sessions").join(name))
}

/// The hops of a packed recording anywhere under tests/fixtures/ (`open-webui/phonebook-run.json`).
pub fn load_fixture(relative: &str) -> Vec<PackedHop> {
    load_path(&fixtures().join("..").join(relative))
}

fn load_path(path: &Path) -> Vec<PackedHop> {
    let text = std::fs::read_to_string(path).expect("session fixture");
    let doc: Value = serde_json::from_str(&text).expect("fixture JSON");
    let mut bodies: Vec<[Option<Vec<u8>>; 2]> = Vec::new();
    let mut out = Vec::new();
    for hop in doc["hops"].as_array().expect("hops") {
        let request = body(&hop["request_body"], &bodies);
        let response = body(&hop["response_body"], &bodies);
        bodies.push([request.clone(), response.clone()]);
        out.push(packed(hop, request, response));
    }
    out
}

fn body(value: &Value, earlier: &[[Option<Vec<u8>>; 2]]) -> Option<Vec<u8>> {
    if value.is_null() {
        return None;
    }
    if let Some(text) = value["utf8"].as_str() {
        return Some(text.as_bytes().to_vec());
    }
    if let Some(b64) = value["base64"].as_str() {
        return Some(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64 body"),
        );
    }
    let base: Vec<u8> = match &value["like"] {
        Value::String(file) => std::fs::read(fixtures().join(file)).expect("base file"),
        Value::Array(at) => {
            let index = at[0].as_u64().expect("index") as usize;
            let side = usize::from(at[1].as_str() == Some("response"));
            earlier[index][side].clone().expect("base body")
        }
        other => panic!("a body of no known form: {other}"),
    };
    let mut out = Vec::with_capacity(base.len());
    let mut at = 0;
    for edit in value["edits"].as_array().expect("edits") {
        let start = edit[0].as_u64().expect("start") as usize;
        let end = edit[1].as_u64().expect("end") as usize;
        out.extend_from_slice(&base[at..start]);
        out.extend_from_slice(edit[2].as_str().expect("text").as_bytes());
        at = end;
    }
    out.extend_from_slice(&base[at..]);
    Some(out)
}

fn headers(value: &Value) -> Vec<Header> {
    value.as_array().map_or_else(Vec::new, |items| {
        items
            .iter()
            .map(|h| {
                let name = h["name"].as_str().expect("name");
                match h["value"].as_str() {
                    Some(text) => Header::new(name, text),
                    None => Header::new(
                        name,
                        base64::engine::general_purpose::STANDARD
                            .decode(h["value_base64"].as_str().expect("value"))
                            .expect("base64 header"),
                    ),
                }
            })
            .collect()
    })
}

fn capture(bytes: Option<Vec<u8>>, len: &Value, truncated: &Value) -> BodyCapture {
    let bytes = bytes.unwrap_or_default();
    BodyCapture {
        total_len: len.as_u64().unwrap_or(bytes.len() as u64),
        truncated: truncated.as_i64() == Some(1),
        bytes,
    }
}

fn packed(hop: &Value, request: Option<Vec<u8>>, response: Option<Vec<u8>>) -> PackedHop {
    let text = |name: &str| hop[name].as_str().expect(name).to_string();
    let time = |name: &str| hop[name].as_i64();
    let start = HopStart {
        id: text("id"),
        route: text("route"),
        role: text("role").parse().expect("role"),
        transport: text("transport").parse().expect("transport"),
        peer: text("peer"),
        method: text("method"),
        path: text("path"),
        url: text("url"),
        request_headers: headers(&hop["request_headers"]),
        started_unix_ns: time("request_started_unix_ns").expect("start"),
        run_id: None,
    };
    let state: HopState = text("state").parse().expect("state");
    let end = HopEnd {
        id: start.id.clone(),
        state: Some(state),
        status: hop["status"].as_u64().map(|s| s as u16),
        response_headers: headers(&hop["response_headers"]),
        response_trailers: headers(&hop["response_trailers"]),
        request_body: capture(
            request,
            &hop["request_body_len"],
            &hop["request_body_truncated"],
        ),
        response_body: capture(
            response,
            &hop["response_body_len"],
            &hop["response_body_truncated"],
        ),
        request_ended_unix_ns: time("request_ended_unix_ns"),
        response_head_unix_ns: time("response_head_unix_ns"),
        response_first_byte_unix_ns: time("response_first_byte_unix_ns"),
        response_ended_unix_ns: time("response_ended_unix_ns"),
        chunks: hop["response_chunks"]
            .as_array()
            .map_or_else(Vec::new, |chunks| {
                chunks
                    .iter()
                    .map(|c| Chunk {
                        offset_ns: c[0].as_i64().expect("offset"),
                        size: c[1].as_u64().expect("size"),
                    })
                    .collect()
            }),
        chunks_truncated: hop["response_chunks_truncated"].as_i64() == Some(1),
        error: hop["error"].as_str().map(str::to_string),
        note: hop["note"].as_str().map(str::to_string),
        websocket: None,
    };
    PackedHop {
        start,
        end,
        live_trace: hop["live_trace"].as_str().map(str::to_string),
    }
}

/// A fresh store in `dir` holding every hop, finished, none grouped.
pub async fn stored(dir: &Path, hops: &[PackedHop]) -> Store {
    let store = Store::open(&dir.join("tracer.db")).await.expect("store");
    {
        let mut conn = store.pool().acquire().await.expect("connection");
        for hop in hops {
            hops::insert_start(&mut conn, &hop.start)
                .await
                .expect("start");
            assert!(hops::apply_end(&mut conn, &hop.end).await.expect("end"));
        }
    }
    store
}
