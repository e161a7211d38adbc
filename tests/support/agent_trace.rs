//! Shared by the tests over real agents' fixtures (tests/fixtures/agents/AGENT/): the hops an
//! agent's run recorded (`hops.json` and the body files it names), rebuilt as one trace.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

/// The fixture directory of one agent.
pub fn agent_dir(agent: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(agent)
}

/// Whether the agents' helper has delivered this agent's fixtures.
pub fn has_agent(agent: &str) -> bool {
    agent_dir(agent).join("hops.json").is_file()
}

fn headers(value: &Value) -> Vec<Header> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|h| Some(Header::new(h["name"].as_str()?, h["value"].as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The agent's run as hops, 100 ms apart in the order recorded, every one `complete` (how a
/// stream's end is judged is not what these tests are about).
pub fn agent_hops(agent: &str) -> Vec<RecordedHop> {
    let dir = agent_dir(agent);
    let listing = std::fs::read(dir.join("hops.json")).expect("hops.json");
    let listing: Value = serde_json::from_slice(&listing).expect("hops.json is JSON");
    let body = |files: &Value, part: &str| -> Vec<u8> {
        files
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|name| name.contains(part))
            .map(|name| std::fs::read(dir.join(name)).expect("a body file"))
            .unwrap_or_default()
    };
    let base = 1_800_000_000_000_000_000_i64;
    listing
        .as_array()
        .expect("a list of hops")
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let id = format!("{:0>32}", index + 1);
            let started = base + index as i64 * 100_000_000;
            let role: Role = entry["role"].as_str().unwrap_or("other").parse().unwrap();
            let path = entry["path"].as_str().unwrap_or("/").to_string();
            RecordedHop {
                read: Default::default(),
                start: HopStart {
                    id: id.clone(),
                    route: entry["route"].as_str().unwrap_or("route").into(),
                    role,
                    transport: Transport::Http,
                    peer: "127.0.0.1:40000".into(),
                    method: entry["method"].as_str().unwrap_or("POST").into(),
                    url: format!("http://127.0.0.1:9{path}"),
                    path,
                    request_headers: headers(&entry["request_headers"]),
                    started_unix_ns: started,
                    run_id: None,
                },
                end: Some(HopEnd {
                    id,
                    state: Some(HopState::Complete),
                    status: entry["status"].as_u64().map(|s| s as u16),
                    response_headers: headers(&entry["response_headers"]),
                    request_body: BodyCapture::whole(body(&entry["files"], "request")),
                    response_body: BodyCapture::whole(body(&entry["files"], "response")),
                    response_head_unix_ns: Some(started + 10_000_000),
                    response_first_byte_unix_ns: Some(started + 20_000_000),
                    response_ended_unix_ns: Some(started + 50_000_000),
                    ..HopEnd::default()
                }),
            }
        })
        .collect()
}

/// The hop whose request body is the given file.
pub fn hop_of<'a>(hops: &'a [RecordedHop], agent: &str, file: &str) -> &'a RecordedHop {
    let bytes = std::fs::read(agent_dir(agent).join(file)).expect("the fixture file");
    hops.iter()
        .find(|hop| {
            hop.end
                .as_ref()
                .is_some_and(|e| e.request_body.bytes == bytes)
        })
        .expect("a hop with that request")
}
