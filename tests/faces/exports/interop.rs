//! Exports read by third-party software in `.venv` (skipped, saying why, when it or the package
//! is missing, unless `TRACER_INTEROP=1`):
//! OTLP by the OpenTelemetry protobuf definitions (`opentelemetry-proto` with
//! `google.protobuf.json_format`), HAR by mitmproxy's HAR reader.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::{db_with, export, sample, sample_names};

/// Exports every sample trace as one `format` document, has `tests/interop/SCRIPT` read it with
/// `python`, and returns what the script printed (JSON) with the number of hops exported.
async fn checked_export(python: &PathBuf, format: &str, script: &str) -> (Value, usize) {
    let dir = tempfile::tempdir().unwrap();
    let names = sample_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let db = db_with(dir.path(), &refs).await;
    let path = dir.path().join(format!("all.{format}"));
    export(
        &db,
        &["--all", "--format", format, "-o", path.to_str().unwrap()],
    );
    let script_path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(script);
    let output = Command::new(python)
        .arg(script_path)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let hop_total: usize = names.iter().map(|n| sample(n).hops().len()).sum();
    (serde_json::from_slice(&output.stdout).unwrap(), hop_total)
}

#[tokio::test]
async fn otlp_parses_with_the_opentelemetry_protobuf_definitions() {
    let Some(python) =
        super::interop_peers::venv_python(".venv", "opentelemetry.proto", "opentelemetry-proto")
    else {
        return;
    };
    let (parsed, hop_total) = checked_export(&python, "otlp", "otlp_check.py").await;
    let spans = parsed["spans"].as_array().unwrap();
    // One span per hop, plus a root for each trace that no agent hop opened.
    let hop_spans = spans
        .iter()
        .filter(|s| s["attributes"]["tracer.hop.id"].is_string())
        .count();
    assert_eq!(hop_spans, hop_total);
    let milk = sample("buy-milk.json");
    let milk_spans: Vec<&Value> = spans
        .iter()
        .filter(|s| s["trace_id"] == milk.trace_id())
        .collect();
    assert_eq!(milk_spans.len(), 5);
    let append = milk_spans
        .iter()
        .find(|s| s["name"] == "execute_tool append")
        .unwrap();
    assert_eq!(append["kind"], 3);
    assert_eq!(append["attributes"]["gen_ai.tool.name"], "append");
    assert_eq!(append["attributes"]["mcp.method.name"], "tools/call");
    let chat = milk_spans
        .iter()
        .find(|s| s["name"] == "chat qwen2.5:7b")
        .unwrap();
    assert_eq!(chat["attributes"]["gen_ai.operation.name"], "chat");
    assert_eq!(chat["attributes"]["gen_ai.request.stream"], false);
}

#[tokio::test]
async fn har_opens_in_mitmproxy() {
    let Some(python) =
        super::interop_peers::venv_python(".venv-mitmproxy", "mitmproxy.io", "mitmproxy==11.0.2")
    else {
        return;
    };
    let (flows, hop_total) = checked_export(&python, "har", "har_check.py").await;
    let flows = flows.as_array().unwrap();
    assert_eq!(flows.len(), hop_total);
    let milk = flows
        .iter()
        .find(|f| f["request_text"] == r#"{"message":"Add buy milk to my notes"}"#)
        .expect("the buy-milk agent request");
    assert_eq!(milk["method"], "POST");
    assert!(milk["url"].as_str().unwrap().ends_with("/agent"));
    assert_eq!(milk["status"], 200);
    // The streamed NDJSON answer comes back whole, as recorded.
    let streamed = sample("streamed-ndjson.json");
    let answer = streamed
        .recorded_hops()
        .into_iter()
        .filter(|h| h.start.role == tracer_wire::hop::Role::Model)
        .max_by_key(|h| h.start.started_unix_ns)
        .unwrap();
    let recorded = String::from_utf8(answer.end.unwrap().response_body.bytes).unwrap();
    assert!(
        flows
            .iter()
            .any(|f| f["response_text"] == recorded.as_str())
    );
}
