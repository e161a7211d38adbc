//! Codex CLI's Responses API over a WebSocket, from the recorded fixture
//! (tests/fixtures/agents/codex/websocket: Codex 0.171.0 through `HTTPS_PROXY`, decrypted by the
//! forward proxy, against the scripted upstream's WebSocket endpoint): the hop and its messages
//! go through the journal into the database and back byte-exact; its three `response.create`
//! turns (a prewarm, the tool call, the answer) read as model hops with the user's words, the
//! tool call, the final text and the usage, in one trace titled by the user's words; the hop log
//! carries the messages and imports back to the same document.

use std::path::Path;

use base64::Engine;
use serde_json::Value;
use tracer_export::hop_log::HopLog;
use tracer_live::correlate::group_new_hops;
use tracer_live::load::{Bodies, load_trace};
use tracer_store::{Recorder, Store};
use tracer_trace::{Direction, explain_trace};
use tracer_wire::hop::{Header, HopEnd, HopSink, HopStart, HopState, Role, Transport};
use tracer_wire::hop::{WsDirection, WsMessage, WsRecord};

const FIXTURE: &str = "tests/fixtures/agents/codex/websocket";
const STARTED: i64 = 1_780_000_000_000_000_000;

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(FIXTURE)
        .join("socket.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn headers(list: &Value) -> Vec<Header> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|h| Header::new(h["name"].as_str().unwrap(), h["value"].as_str().unwrap()))
        .collect()
}

/// The fixture's WebSocket hop, as the proxy hands it to the store.
fn socket_hop(socket: &Value) -> (HopStart, HopEnd) {
    let start = HopStart {
        id: "c0dec0dec0dec0dec0dec0dec0dec0de".into(),
        route: socket["route"].as_str().unwrap().into(),
        role: Role::Model,
        transport: Transport::Http,
        peer: "127.0.0.1:50000".into(),
        method: socket["method"].as_str().unwrap().into(),
        path: socket["path"].as_str().unwrap().into(),
        url: socket["url"].as_str().unwrap().into(),
        request_headers: headers(&socket["request_headers"]),
        started_unix_ns: STARTED,
        run_id: None,
    };
    let messages = socket["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| WsMessage {
            direction: WsDirection::parse(m["direction"].as_str().unwrap()).unwrap(),
            at_unix_ns: STARTED + m["offset_ns"].as_i64().unwrap(),
            opcode: m["opcode"].as_u64().unwrap() as u8,
            size: m["size"].as_u64().unwrap(),
            wire_size: m["wire_size"].as_u64().unwrap(),
            frames: m["frames"].as_u64().unwrap() as u32,
            compressed: m["compressed"].as_bool().unwrap(),
            complete: m["complete"].as_bool().unwrap(),
            data: match (m.get("text"), m.get("base64")) {
                (Some(text), _) => text.as_str().unwrap().as_bytes().to_vec(),
                (_, Some(b64)) => base64::engine::general_purpose::STANDARD
                    .decode(b64.as_str().unwrap())
                    .unwrap(),
                _ => Vec::new(),
            },
            error: None,
        })
        .collect();
    let end = HopEnd {
        id: start.id.clone(),
        state: Some(HopState::Complete),
        status: Some(101),
        response_headers: headers(&socket["response_headers"]),
        request_body: tracer_wire::hop::BodyCapture {
            bytes: Vec::new(),
            total_len: socket["bytes_up"].as_u64().unwrap(),
            truncated: true,
        },
        response_body: tracer_wire::hop::BodyCapture {
            bytes: Vec::new(),
            total_len: socket["bytes_down"].as_u64().unwrap(),
            truncated: true,
        },
        response_head_unix_ns: Some(STARTED + socket["head_offset_ns"].as_i64().unwrap()),
        response_ended_unix_ns: Some(STARTED + socket["ended_offset_ns"].as_i64().unwrap()),
        websocket: Some(WsRecord {
            messages,
            not_listed: 0,
            extensions: socket["websocket"]["extensions"].as_str().unwrap().into(),
        }),
        ..HopEnd::default()
    };
    (start, end)
}

/// The fixture recorded through the journal and the writer into a fresh database.
async fn recorded(dir: &Path) -> (Store, HopEnd) {
    let store = Store::open(&dir.join("t.db")).await.unwrap();
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let (start, end) = socket_hop(&fixture());
    assert!(recorder.start(start));
    recorder.end(end.clone());
    drop(recorder);
    writer.await.unwrap();
    (store, end)
}

#[tokio::test]
async fn codex_over_a_websocket_is_stored_byte_exact_and_read_as_three_model_turns() {
    let dir = tempfile::tempdir().unwrap();
    let (store, sent) = recorded(dir.path()).await;
    let stored = store.all_hops().await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(
        stored[0].end.websocket, sent.websocket,
        "every message back from ws_frames byte-exact"
    );
    group_new_hops(&store).await.unwrap();
    let traces = store.traces().await.unwrap();
    assert_eq!(traces.len(), 1);
    assert_eq!(
        traces[0].title.as_deref(),
        Some("Add buy milk to my notes"),
        "titled by the user's words in the second response.create"
    );
    let hops = load_trace(&store, &traces[0].id, Bodies::Kept)
        .await
        .unwrap()
        .hops;
    let methods: Vec<&str> = hops.iter().map(|h| h.start.method.as_str()).collect();
    assert_eq!(
        methods,
        ["GET", "WS", "WS", "WS"],
        "the socket, then one hop per turn"
    );
    let messages = explain_trace(&hops);
    let line = |m: &tracer_trace::ExplainedMessage| format!("{} {}", m.summary, m.explanation);
    for m in &messages {
        assert!(!line(m).contains('\u{fffd}'), "{}", line(m));
    }
    let turns: Vec<_> = messages
        .iter()
        .filter(|m| m.head.starts_with("WS "))
        .collect();
    assert_eq!(turns.len(), 3);
    assert!(turns.iter().all(|m| m.dialect == "openai.responses"));
    assert!(
        line(turns[0]).contains("`generate: false`: a prewarm"),
        "{}",
        line(turns[0])
    );
    assert!(
        line(turns[1]).contains("only the new items")
            && line(turns[1]).contains("previous_response_id` resp_prewarm_")
            && !line(turns[1]).contains("remembers nothing"),
        "{}",
        line(turns[1])
    );
    let answers: Vec<_> = messages
        .iter()
        .filter(|m| m.direction == Direction::Response && m.dialect == "openai.responses")
        .collect();
    assert_eq!(answers.len(), 3);
    assert!(
        answers[1]
            .summary
            .contains("append {\"content\":\"buy milk\"}"),
        "{}",
        answers[1].summary
    );
    assert!(
        answers[2]
            .summary
            .contains("Done: I added \"buy milk\" to your notes."),
        "{}",
        answers[2].summary
    );
    let tokens: Vec<u64> = answers
        .iter()
        .filter_map(|m| m.tokens.as_ref().and_then(|t| t.prompt))
        .collect();
    assert_eq!(tokens, [0, 12_034, 12_390], "usage of each turn");
    let socket_answer = messages
        .iter()
        .find(|m| m.direction == Direction::Response && m.head == "101")
        .unwrap();
    assert!(
        socket_answer.summary.starts_with("WebSocket: 3 messages")
            && socket_answer.summary.contains("3 Responses turns"),
        "{}",
        socket_answer.summary
    );
}

#[tokio::test]
async fn the_scripted_server_read_exactly_what_the_record_says_codex_sent() {
    let socket = fixture();
    let log = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(FIXTURE)
            .join("upstream-requests.jsonl"),
    )
    .unwrap();
    let read: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["answered"].as_str().unwrap().starts_with("websocket:"))
        .map(|e| e["body"].as_str().unwrap().to_string())
        .collect();
    let sent: Vec<String> = socket["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["direction"] == "send" && m["opcode"] == 1)
        .map(|m| m["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(read.len(), 3);
    assert_eq!(
        sent, read,
        "each recorded message is what the server inflated"
    );
}

#[tokio::test]
async fn the_hop_log_carries_the_messages_and_imports_back_to_the_same_document() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = recorded(dir.path()).await;
    group_new_hops(&store).await.unwrap();
    let id = store.traces().await.unwrap()[0].id.clone();
    let exported = HopLog::from_store(&store, &id)
        .await
        .unwrap()
        .to_json_pretty();
    let json: Value = serde_json::from_str(&exported).unwrap();
    let schema: Value = serde_json::from_slice(
        &std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hop-log.schema.json"))
            .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
    let with_messages: Vec<_> = json["hops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h.get("websocket").is_some())
        .collect();
    assert_eq!(with_messages.len(), 1);
    assert_eq!(
        with_messages[0]["websocket"]["messages"]
            .as_array()
            .unwrap()
            .len(),
        42
    );
    let other = Store::open(&dir.path().join("other.db")).await.unwrap();
    HopLog::from_json(exported.as_bytes())
        .unwrap()
        .import(&other)
        .await
        .unwrap();
    assert_eq!(
        other.all_hops().await.unwrap().len(),
        1,
        "turns are not stored"
    );
    let again = HopLog::from_store(&other, &id)
        .await
        .unwrap()
        .to_json_pretty();
    assert_eq!(again, exported);
    let shown = HopLog::from_file(exported.as_bytes())
        .unwrap()
        .to_json_pretty();
    assert_eq!(shown, exported, "show FILE reads the same trace");
}

#[tokio::test]
async fn har_has_the_messages_as_devtools_write_them_and_otlp_has_them_as_span_events() {
    use tracer_export::body_text::TraceToExport;
    let dir = tempfile::tempdir().unwrap();
    let (store, sent) = recorded(dir.path()).await;
    group_new_hops(&store).await.unwrap();
    let row = store.traces().await.unwrap().remove(0);
    let hops = load_trace(&store, &row.id, Bodies::Kept)
        .await
        .unwrap()
        .hops;
    let trace = TraceToExport {
        fetch: None,
        id: &row.id,
        title: row.title.as_deref(),
        hops: &hops,
        session: None,
        agent_events: &[],
    };
    let har = tracer_export::har::har_document(std::slice::from_ref(&trace));
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(
        entries.len(),
        1,
        "turns live in the socket's messages, not as entries"
    );
    let socket = &entries[0];
    assert_eq!(socket["_resourceType"], "websocket");
    assert!(socket["request"].get("postData").is_none());
    let messages = socket["_webSocketMessages"].as_array().unwrap();
    let record = sent.websocket.as_ref().unwrap();
    assert_eq!(messages.len(), record.messages.len());
    for (har, m) in messages.iter().zip(&record.messages) {
        let keys: Vec<&str> = har
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(&keys[..4], ["type", "time", "opcode", "data"]);
        assert_eq!(har["type"], m.direction.as_str());
        assert_eq!(har["opcode"], m.opcode);
        assert_eq!(har["data"].as_str().unwrap().as_bytes(), m.data.as_slice());
        let time = har["time"].as_f64().unwrap();
        assert!((time - m.at_unix_ns as f64 / 1e9).abs() < 1e-3);
    }
    let options = tracer_export::otlp::model::SpanOptions { content: false };
    let spans = tracer_export::otlp::spans_of(std::slice::from_ref(&trace), options);
    let socket_span = spans
        .iter()
        .find(|s| s.hop_id.as_deref() == Some("c0dec0dec0dec0dec0dec0dec0dec0de"))
        .unwrap();
    let events: Vec<_> = socket_span
        .events
        .iter()
        .filter(|e| e.name == "websocket.message")
        .collect();
    assert_eq!(events.len(), 42);
    assert_eq!(
        events[0].attributes[0],
        tracer_export::otlp::model::Attribute::text("websocket.direction", "send")
    );
    let model_spans = spans
        .iter()
        .filter(|s| s.text_attribute("gen_ai.operation.name") == Some("chat"))
        .count();
    assert_eq!(model_spans, 3, "each turn a model span");
    let proto = tracer_export::otlp::otlp_protobuf(std::slice::from_ref(&trace), options);
    assert!(!proto.is_empty());
    let html = tracer_export::html::html_page(&trace);
    let md = tracer_export::mermaid::markdown_handout(&trace);
    for handout in [&html, &md] {
        assert!(
            handout.contains("WebSocket messages"),
            "listed in the handouts"
        );
        assert!(handout.contains("response.completed"));
        assert!(handout.contains("Add buy milk to my notes"));
        assert!(!handout.contains('\u{fffd}'));
    }
    // mitmproxy still reads the HAR (when .venv-mitmproxy has it).
    let Some(python) =
        super::interop_peers::venv_python(".venv-mitmproxy", "mitmproxy.io", "mitmproxy==11.0.2")
    else {
        return;
    };
    let path = dir.path().join("codex.har");
    std::fs::write(&path, serde_json::to_vec(&har).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/har_check.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let flows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(flows.as_array().unwrap().len(), 1);
    assert_eq!(flows[0]["status"], 101);
}

#[tokio::test]
async fn search_finds_a_turns_answer_in_the_sockets_messages_by_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = recorded(dir.path()).await;
    group_new_hops(&store).await.unwrap();
    let traces = store.traces().await.unwrap();
    let hops = load_trace(&store, &traces[0].id, Bodies::Kept)
        .await
        .unwrap()
        .hops;
    let answer = explain_trace(&hops)
        .into_iter()
        .filter(|m| m.direction == Direction::Response && m.dialect == "openai.responses")
        .nth(2)
        .unwrap();
    // The final answer's words exist only in the server's messages on the socket.
    let report = tracer_live::search::search(&store, "i ADDED \"buy milk\" to your notes", 20)
        .await
        .unwrap();
    assert_eq!(report.traces.len(), 1, "{report:?}");
    let found = &report.traces[0].messages;
    assert!(
        found
            .iter()
            .any(|m| m.number == answer.number && m.direction == "response"),
        "message {} in {found:?}",
        answer.number
    );
    store.close().await;
}
