//! The OTLP export read by the OpenTelemetry protobuf definitions (Python `opentelemetry-proto`
//! with `google.protobuf.json_format`), in `.venv`; skipped without it unless `TRACER_INTEROP=1`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::{db_with, export, sample, sample_names};

fn venv_python() -> Option<PathBuf> {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    let message = format!(
        "{} is missing; create it with: python3 -m venv .venv && .venv/bin/pip install -r tests/interop/requirements.txt",
        python.display()
    );
    if std::env::var("TRACER_INTEROP").as_deref() == Ok("1") {
        panic!("TRACER_INTEROP=1 but {message}");
    }
    eprintln!("skipping the OTLP protobuf check: {message}");
    None
}

#[tokio::test]
async fn otlp_parses_with_the_opentelemetry_protobuf_definitions() {
    let Some(python) = venv_python() else {
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
