//! Exports read by third-party software in `.venv` (skipped, saying why, when it or the package
//! is missing, unless `TRACER_INTEROP=1`):
//! OTLP by the OpenTelemetry protobuf definitions (`opentelemetry-proto` with
//! `google.protobuf.json_format`), HAR by mitmproxy's HAR reader.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::{db_with, export, sample, sample_names};

/// `VENV/bin/python` when it exists and imports `module` (installed as `package`); otherwise
/// skips, saying why, or fails when `TRACER_INTEROP=1`. mitmproxy lives in a venv of its own
/// (`.venv-mitmproxy`): its pins conflict with the OpenAI SDK's.
pub fn venv_python(venv: &str, module: &str, package: &str) -> Option<PathBuf> {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(venv)
        .join("bin/python");
    let missing = if !python.exists() {
        Some(format!(
            "{} is missing; create it with: python3 -m venv {venv} && {venv}/bin/pip install {package}",
            python.display()
        ))
    } else {
        let imported = Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success());
        (!imported).then(|| {
            format!("{module} is not in {venv}; install it with: {venv}/bin/pip install {package}")
        })
    };
    let Some(message) = missing else {
        return Some(python);
    };
    if std::env::var("TRACER_INTEROP").as_deref() == Ok("1") {
        panic!("TRACER_INTEROP=1 but {message}");
    }
    eprintln!("skipping an interop check: {message}");
    None
}

#[tokio::test]
async fn otlp_parses_with_the_opentelemetry_protobuf_definitions() {
    let Some(python) = venv_python(".venv", "opentelemetry.proto", "opentelemetry-proto") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let names = sample_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let db = db_with(dir.path(), &refs).await;
    let path = dir.path().join("all.otlp.json");
    export(
        &db,
        &["--all", "--format", "otlp", "-o", path.to_str().unwrap()],
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/otlp_check.py");
    let output = Command::new(python)
        .arg(script)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "otlp_check.py: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let parsed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let spans = parsed["spans"].as_array().unwrap();
    let hop_total: usize = names.iter().map(|n| sample(n).hops().len()).sum();
    assert_eq!(spans.len(), hop_total);
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
    let Some(python) = venv_python(".venv-mitmproxy", "mitmproxy.io", "mitmproxy==11.0.2") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let names = sample_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let db = db_with(dir.path(), &refs).await;
    let path = dir.path().join("all.har");
    export(
        &db,
        &["--all", "--format", "har", "-o", path.to_str().unwrap()],
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/har_check.py");
    let output = Command::new(python)
        .arg(script)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "har_check.py: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let flows: Value = serde_json::from_slice(&output.stdout).unwrap();
    let flows = flows.as_array().unwrap();
    let hop_total: usize = names.iter().map(|n| sample(n).hops().len()).sum();
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
        .filter(|h| h.start.role == tracer::hop::Role::Model)
        .max_by_key(|h| h.start.started_unix_ns)
        .unwrap();
    let recorded = String::from_utf8(answer.end.unwrap().response_body.bytes).unwrap();
    assert!(
        flows
            .iter()
            .any(|f| f["response_text"] == recorded.as_str())
    );
}
