//! The JSON hop log over a real SQLite store: export → import → export gives the same bytes, the
//! export validates against docs/hop-log.schema.json, hops rebuild exactly, and files that are
//! not hop logs (or clash with what is stored) are refused with nothing written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::trace_hops as support;

use serde_json::{Value, json};
use support::{BASE, MS, buy, hop};
use tracer_export::hop_log::{HopLog, HopLogError};
use tracer_store::traces::TraceRow;
use tracer_store::{Store, StoreError, hops};
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Chunk, Header, HopState, Role};

async fn store_in(dir: &tempfile::TempDir, name: &str) -> Store {
    Store::open(&dir.path().join(name)).await.unwrap()
}

async fn record(store: &Store, hop: &RecordedHop) {
    let mut conn = store.pool().acquire().await.unwrap();
    hops::insert_start(&mut conn, &hop.start).await.unwrap();
    let end = hop.end.as_ref().unwrap();
    if end.state == Some(HopState::InFlight) {
        let done = tracer_wire::hop::RequestDone {
            id: end.id.clone(),
            request_body: end.request_body.clone(),
            request_ended_unix_ns: end.request_ended_unix_ns.unwrap(),
        };
        hops::apply_request_done(&mut conn, &done).await.unwrap();
    } else {
        assert!(hops::apply_end(&mut conn, end).await.unwrap());
    }
}

/// The buy-milk walk, with a streamed model answer, odd headers and bodies, and a hop in flight.
fn buy_milk_with_edges() -> Vec<RecordedHop> {
    let mut hops = buy("a", "buy milk", 0);
    // The second model call streams NDJSON, written Python-style with spaces and escapes.
    let answer = &mut hops[4];
    let end = answer.end.as_mut().unwrap();
    end.response_body = BodyCapture::whole(
        b"{\"message\": {\"role\": \"assistant\", \"content\": \"I've added\"}, \"done\": false}\n{\"message\": {\"role\": \"assistant\", \"content\": \" \\\"buy milk\\\" \\u00e9.\"}, \"done\": true}\n"
            .to_vec(),
    );
    end.chunks = vec![
        Chunk {
            offset_ns: 300 * MS,
            size: 80,
        },
        Chunk {
            offset_ns: 370 * MS,
            size: 96,
        },
    ];
    end.response_head_unix_ns = Some(BASE + 830 * MS);
    answer
        .start
        .request_headers
        .push(Header::new("x-latin1", b"caf\xe9".to_vec()));
    // The tools/list answer is pretty-printed with a trailing newline.
    let list = hops[1].end.as_mut().unwrap();
    list.response_body = BodyCapture::whole(
        b"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\n    \"tools\": [\n      {\n        \"name\": \"append\"\n      }\n    ]\n  }\n}\n".to_vec(),
    );
    // A hop still in flight, its request recorded, and one whose upstream was down.
    let mut late = hop("a6", Role::Other, "/upload", 940, 0).done();
    let late_end = late.end.as_mut().unwrap();
    late_end.state = Some(HopState::InFlight);
    late_end.status = None;
    late_end.response_headers.clear();
    late_end.response_first_byte_unix_ns = None;
    late_end.response_ended_unix_ns = None;
    late_end.request_body = BodyCapture {
        bytes: b"\x00\xffbinary".to_vec(),
        total_len: 4096,
        truncated: true,
    };
    late_end.request_ended_unix_ns = Some(BASE + 941 * MS);
    hops.push(late);
    let mut down = hop("a7", Role::Mcp, "/mcp", 950, 951).done();
    let down_end = down.end.as_mut().unwrap();
    down_end.state = Some(HopState::Failed);
    down_end.status = None;
    down_end.error = Some("upstream refused the connection".into());
    down_end.response_body = BodyCapture::default();
    hops.push(down);
    hops
}

async fn stored_trace(store: &Store, hops: &[RecordedHop]) -> String {
    for hop in hops {
        record(store, hop).await;
    }
    let id = hops[0].start.id.clone();
    let trace = TraceRow {
        id: id.clone(),
        title: Some("Add buy milk to my notes".into()),
        kind: "request".into(),
        started_unix_ns: BASE,
        ended_unix_ns: None,
        created_by: "correlate".into(),
    };
    let assignments: Vec<(String, String)> = hops
        .iter()
        .map(|h| (h.start.id.clone(), id.clone()))
        .collect();
    store.write_grouping(&[trace], &assignments).await.unwrap();
    id
}

pub(crate) fn schema_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/hop-log.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

pub(crate) fn assert_valid(validator: &jsonschema::Validator, text: &str) {
    let instance: Value = serde_json::from_str(text).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
}

#[tokio::test]
async fn export_import_export_is_byte_identical_and_valid() {
    let dir = tempfile::tempdir().unwrap();
    let source = store_in(&dir, "source.db").await;
    let hops = buy_milk_with_edges();
    let id = stored_trace(&source, &hops).await;

    let log = HopLog::from_store(&source, &id[..12]).await.unwrap();
    assert_eq!(log.trace_id(), id);
    assert_eq!(log.title(), Some("Add buy milk to my notes"));
    let first = log.to_json_pretty();
    let validator = schema_validator();
    assert_valid(&validator, &first);
    // The schema has teeth: a body with both json and text, or a request with a status, fails.
    let mut wrong: Value = serde_json::from_str(&first).unwrap();
    wrong["messages"][0]["body"]["text"] = json!("x");
    wrong["messages"][1]["status"] = json!(200);
    assert_eq!(validator.iter_errors(&wrong).count(), 2);

    // The hops rebuild exactly as the store gives them back.
    let stored: Vec<RecordedHop> = source
        .trace_hops(&id)
        .await
        .unwrap()
        .into_iter()
        .map(tracer_live::load::recorded)
        .collect();
    let read = HopLog::from_json(first.as_bytes()).unwrap();
    assert_eq!(read, log);
    assert_eq!(read.recorded_hops(), stored);

    let target = store_in(&dir, "target.db").await;
    assert_eq!(read.import(&target).await.unwrap(), id);
    let second = HopLog::from_store(&target, &id)
        .await
        .unwrap()
        .to_json_pretty();
    assert_eq!(first, second);

    // Importing again is refused and writes nothing.
    let before = target.hop_count().await.unwrap();
    let again = read.import(&target).await.unwrap_err();
    assert!(matches!(again, HopLogError::TraceExists(_)), "{again}");
    assert_eq!(target.hop_count().await.unwrap(), before);
}

#[tokio::test]
async fn the_buy_milk_log_reads_like_the_article() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir, "t.db").await;
    let id = stored_trace(&store, &buy_milk_with_edges()).await;
    let log: Value = serde_json::from_str(
        &HopLog::from_store(&store, &id)
            .await
            .unwrap()
            .to_json_pretty(),
    )
    .unwrap();
    assert_eq!(log["format"], "tracer.hop-log");
    assert_eq!(log["version"], 4);
    assert_eq!(log["trace"]["hop_count"], 7);
    assert_eq!(log["trace"]["status"], "in flight");
    assert_eq!(log["trace"]["tools_used"], json!(["append"]));
    let messages = log["messages"].as_array().unwrap();
    let first = &messages[0];
    assert_eq!(
        (
            &first["number"],
            &first["direction"],
            &first["from"],
            &first["to"]
        ),
        (&json!(1), &json!("→"), &json!("you"), &json!("agent"))
    );
    assert_eq!(
        first["body"]["json"],
        json!({"message": "Add buy milk to my notes"})
    );
    let ask = &messages[4];
    assert_eq!(ask["direction"], "←");
    assert_eq!(ask["case"], "model_tool_call");
    assert_eq!(ask["status"], 200);
    assert!(ask["summary"].as_str().unwrap().contains("append"), "{ask}");
    // Key order of an embedded body is the wire's: model, message, done, done_reason.
    let keys: Vec<&String> = ask["body"]["json"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "message", "done", "done_reason"]);
    let list = &messages[2];
    assert_eq!(list["body"]["layout"], "pretty+newline");
    let streamed = messages
        .iter()
        .find(|m| m["hop_id"] == log["hops"][4]["id"] && m["direction"] == "←")
        .unwrap();
    assert!(
        streamed["body"]["text"]
            .as_str()
            .unwrap()
            .contains("\"done\": true")
    );
    assert_eq!(
        streamed["timings"]["chunks"][1],
        json!({"offset_ns": 370 * MS, "size": 96})
    );
    let latin = &messages
        .iter()
        .find(|m| m["hop_id"] == streamed["hop_id"])
        .unwrap()["headers"];
    assert!(
        latin
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["value_base64"] == "Y2Fm6Q==")
    );
    let hops = log["hops"].as_array().unwrap();
    assert_eq!(hops[5]["state"], "in_flight");
    assert_eq!(hops[6]["error"], "upstream refused the connection");
    let upload = messages
        .iter()
        .find(|m| m["hop_id"] == hops[5]["id"])
        .unwrap();
    assert_eq!(upload["body"]["truncated"], true);
    assert_eq!(upload["body"]["length"], 4096);
    assert!(upload["body"]["base64"].is_string());
    assert_eq!(messages.len(), 13, "the in-flight hop has no response yet");
}

#[tokio::test]
async fn files_that_are_not_hop_logs_are_named_and_refused() {
    let cases: [(&[u8], &str); 6] = [
        (b"buy milk", "not a tracer hop log: not JSON"),
        (b"[1, 2]", "not a tracer hop log: the JSON is not an object"),
        (b"{\"log\": []}", "no \"format\": \"tracer.hop-log\" field"),
        (b"{\"format\": \"har\"}", "\"format\" is \"har\""),
        (
            b"{\"format\": \"tracer.hop-log\", \"version\": 9}",
            "version 9 is not supported",
        ),
        (
            b"{\"format\": \"tracer.hop-log\", \"version\": 1, \"trace\": {}}",
            "malformed hop log: missing field",
        ),
    ];
    for (bytes, expected) in cases {
        let error = HopLog::from_json(bytes).unwrap_err().to_string();
        assert!(error.contains(expected), "{error} lacks {expected}");
        assert_eq!(error.lines().count(), 1, "{error}");
    }

    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir, "t.db").await;
    let id = stored_trace(&store, &buy("a", "buy milk", 0)).await;
    let good: Value = serde_json::from_str(
        &HopLog::from_store(&store, &id)
            .await
            .unwrap()
            .to_json_pretty(),
    )
    .unwrap();
    let mut no_request = good.clone();
    no_request["messages"].as_array_mut().unwrap().remove(1);
    let error = HopLog::from_json(no_request.to_string().as_bytes()).unwrap_err();
    assert!(
        error.to_string().contains("has no request message"),
        "{error}"
    );
    let mut bad_body = good.clone();
    bad_body["messages"][0]["body"]["text"] = json!("also text");
    let error = HopLog::from_json(bad_body.to_string().as_bytes()).unwrap_err();
    assert!(error.to_string().contains("exactly one of json"), "{error}");

    // A log whose hop is already stored under another trace: refused, and the trace not written.
    let mut clash = good.clone();
    clash["trace"]["id"] = json!("f".repeat(32));
    let clash = HopLog::from_json(clash.to_string().as_bytes()).unwrap();
    let error = clash.import(&store).await.unwrap_err();
    assert!(matches!(error, HopLogError::HopExists(_)), "{error}");
    assert!(
        store.trace(&"f".repeat(32)).await.is_err(),
        "nothing written"
    );
}

#[tokio::test]
async fn unknown_and_ambiguous_trace_ids_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir, "t.db").await;
    stored_trace(&store, &buy("a", "milk", 0)).await;
    stored_trace(&store, &buy("b", "eggs", 2000)).await;
    let error = HopLog::from_store(&store, "deadbeef").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "no trace deadbeef in the database; tracer ls lists the traces it holds"
    );
    let error = HopLog::from_store(&store, "0000").await.unwrap_err();
    assert!(
        matches!(error, HopLogError::Store(StoreError::AmbiguousTrace(_))),
        "{error}"
    );
    assert!(HopLog::from_store(&store, "").await.is_err());
}
