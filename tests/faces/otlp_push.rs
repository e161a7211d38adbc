//! What is recorded, sent later or written as protobuf: `tracer export --push` sends the sample
//! traces' spans once (GenAI, MCP and OpenInference attributes as Phoenix reads them), a second
//! push sends nothing; `--protobuf` writes the same spans as the JSON export; and
//! `tracer wrap --otlp` exports what a stdio server did.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::Value;
use tracer_export::hop_log::HopLog;
use tracer_store::Store;

use super::otlp_receiver::Receiver;
use super::otlp_tracer::tracer;

fn sample(name: &str) -> HopLog {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name);
    HopLog::from_json(&std::fs::read(path).unwrap()).unwrap()
}

async fn db_with(dir: &Path, names: &[&str]) -> PathBuf {
    let path = dir.join("tracer.db");
    let store = Store::open(&path).await.unwrap();
    for name in names {
        sample(name).import(&store).await.unwrap();
    }
    store.close().await;
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn push_sends_recorded_spans_once_with_the_conventions_phoenix_reads() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = db_with(
        dir.path(),
        &["buy-milk.json", "tool-error-fixed.json", "read-notes.json"],
    )
    .await;
    let push = || {
        tracer(&db, &[])
            .args([
                "export",
                "--all",
                "-f",
                "otlp",
                "--push",
                &receiver.base_url(),
            ])
            .output()
            .unwrap()
    };
    let first = push();
    let said = String::from_utf8_lossy(&first.stderr).to_string();
    assert!(first.status.success(), "{said}");
    let spans = receiver.accepted_spans();
    assert!(
        said.contains(&format!("{} spans sent to", spans.len())),
        "{said}"
    );

    let milk = sample("buy-milk.json");
    let trace: Vec<_> = spans
        .iter()
        .filter(|s| s.trace_id == milk.trace_id())
        .collect();
    assert_eq!(trace.len(), 5, "one span per hop of buy milk");
    let kind = |name: &str| -> Vec<&str> {
        trace
            .iter()
            .filter(|s| s.name == name)
            .map(|s| s.text("openinference.span.kind").unwrap())
            .collect()
    };
    assert_eq!(kind("chat qwen2.5:7b"), ["LLM", "LLM"]);
    assert_eq!(kind("execute_tool append"), ["TOOL"]);
    assert_eq!(kind("invoke_agent"), ["AGENT"]);
    assert_eq!(kind("tools/list"), ["CHAIN"]);
    let root = trace.iter().find(|s| s.name == "invoke_agent").unwrap();
    let chat = trace.iter().find(|s| s.name.starts_with("chat")).unwrap();
    assert_eq!(chat.parent_span_id, root.span_id);
    assert_eq!(chat.text("gen_ai.provider.name"), Some("ollama"));
    assert_eq!(chat.text("gen_ai.request.model"), Some("qwen2.5:7b"));
    assert_eq!(chat.text("llm.model_name"), Some("qwen2.5:7b"));
    assert_eq!(
        chat.attributes["tracer.tool_calls"],
        serde_json::json!(["append"])
    );
    // read-notes' model reported its usage and finish reason.
    let read = sample("read-notes.json");
    let counted = spans
        .iter()
        .find(|s| s.trace_id == read.trace_id() && s.name.starts_with("chat"))
        .unwrap();
    assert_eq!(counted.attributes["gen_ai.usage.input_tokens"], 402);
    assert_eq!(counted.attributes["llm.token_count.prompt"], 402);
    assert_eq!(counted.attributes["llm.token_count.total"], 416);
    assert!(counted.attributes["gen_ai.response.finish_reasons"].is_array());
    let tool = trace
        .iter()
        .find(|s| s.name == "execute_tool append")
        .unwrap();
    assert_eq!(tool.text("mcp.method.name"), Some("tools/call"));
    assert_eq!(tool.text("gen_ai.tool.name"), Some("append"));
    assert_eq!(tool.text("network.transport"), Some("tcp"));
    assert!(tool.text("jsonrpc.request.id").is_some());
    assert!(
        tool.text("gen_ai.tool.call.arguments").is_none(),
        "contents are opt-in"
    );
    let failed = spans
        .iter()
        .find(|s| s.name == "execute_tool append" && s.text("error.type") == Some("tool_error"))
        .expect("the tool error of tool-error-fixed");
    assert_eq!(failed.status_code, 2);

    let requests = receiver.requests().len();
    let second = push();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{said}");
    assert!(
        said.contains("0 spans sent") && said.contains(&format!("{} already there", spans.len())),
        "{said}"
    );
    assert_eq!(receiver.requests().len(), requests, "nothing sent twice");
}

#[tokio::test]
async fn protobuf_file_holds_the_spans_of_the_json_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_with(dir.path(), &["buy-milk.json", "read-notes.json"]).await;
    let file = dir.path().join("all.pb");
    let written = tracer(&db, &[])
        .args(["export", "--all", "--format", "otlp", "--protobuf", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    let request =
        ExportTraceServiceRequest::decode(std::fs::read(&file).unwrap().as_slice()).unwrap();
    let binary: Vec<(String, String)> = request.resource_spans[0].scope_spans[0]
        .spans
        .iter()
        .map(|s| (hex(&s.span_id), s.name.clone()))
        .collect();
    let json = tracer(&db, &[])
        .args(["export", "--all", "--format", "otlp"])
        .output()
        .unwrap();
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    let textual: Vec<(String, String)> = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["spanId"].as_str().unwrap().into(),
                s["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(binary, textual);
    assert_eq!(binary.len(), 10);

    let refused = tracer(&db, &[])
        .args(["export", "--all", "--format", "har", "--protobuf", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--format otlp"));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn wrap_exports_what_a_stdio_server_did() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let mut child = tracer(&db, &[])
        .args([
            "wrap",
            "--name",
            "notes",
            "--otlp",
            &receiver.base_url(),
            "--otlp-delay",
            "0.2",
        ])
        .args([
            "--",
            env!("CARGO_BIN_EXE_notes-server"),
            "--stdio",
            "--file",
        ])
        .arg(dir.path().join("notes.txt"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"append","arguments":{"content":"buy milk"}}}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    // The spans go while the server runs (a host keeps it open), not only at its end.
    let spans = receiver.wait_for_spans(3, Duration::from_secs(30)).await;
    drop(stdin);
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("spans exported to"), "{said}");
    let tool = spans
        .iter()
        .find(|s| s.name == "execute_tool append")
        .unwrap_or_else(|| panic!("{:?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>()));
    assert_eq!(tool.text("network.transport"), Some("pipe"));
    assert_eq!(tool.text("openinference.span.kind"), Some("TOOL"));
    let hops = Store::open(&db)
        .await
        .unwrap()
        .all_hops()
        .await
        .unwrap()
        .len();
    let all = receiver.accepted_spans();
    let hop_spans = all
        .iter()
        .filter(|s| s.attributes.contains_key("tracer.hop.id"))
        .count();
    assert_eq!(hop_spans, hops, "every hop once");
}
