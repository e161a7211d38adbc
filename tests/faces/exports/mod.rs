//! `tracer export` over the sample traces: HAR 1.2 structure, the Mermaid `sequenceDiagram`,
//! the Markdown handout, OTLP/JSON shape (and, with `.venv`, the OpenTelemetry protobuf
//! definitions), `--all`, and the hop log written back byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;
use tracer_export::hop_log::HopLog;
use tracer_store::Store;

mod har_check;
mod interop;
use crate::interop_peers;

use har_check::{check_har, number};

pub fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-traces")
}

pub fn sample_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(samples_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

pub fn sample(name: &str) -> HopLog {
    HopLog::from_json(&std::fs::read(samples_dir().join(name)).unwrap()).unwrap()
}

/// A database holding the given samples (imported as `tracer import` does).
pub async fn db_with(dir: &Path, names: &[&str]) -> PathBuf {
    let path = dir.join("tracer.db");
    let store = Store::open(&path).await.unwrap();
    for name in names {
        sample(name).import(&store).await.unwrap();
    }
    store.close().await;
    path
}

pub fn export(db: &Path, args: &[&str]) -> String {
    let output = cargo_bin_cmd!("tracer")
        .arg("--db")
        .arg(db)
        .arg("export")
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "tracer export {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn har_has_every_hop_with_the_required_fields_and_recorded_timings() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_with(dir.path(), &["buy-milk.json", "streamed-ndjson.json"]).await;
    let log = sample("buy-milk.json");
    let har: Value =
        serde_json::from_str(&export(&db, &[log.trace_id(), "--format", "har"])).unwrap();
    assert_eq!(check_har(&har), 5);
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(entries[0]["request"]["method"], "POST");
    assert!(
        entries[0]["request"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/agent")
    );
    assert_eq!(entries[0]["_number"], 1);
    let postdata = entries[0]["request"]["postData"]["text"].as_str().unwrap();
    assert!(postdata.contains("Add buy milk to my notes"));
    let model = &entries[2];
    assert!(
        model["request"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/api/chat")
    );
    assert!(
        model["response"]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("\"append\"")
    );
    assert_eq!(har["log"]["pages"][0]["title"], "Add buy milk to my notes");

    // The streamed answer took its recorded ~0.6 s to arrive: that is `receive`.
    let streamed = sample("streamed-ndjson.json");
    let har: Value =
        serde_json::from_str(&export(&db, &[&streamed.trace_id()[..8], "-f", "har"])).unwrap();
    check_har(&har);
    let answer = har["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|e| e["_role"] == "model")
        .unwrap();
    assert!(
        number(&answer["timings"]["receive"], "receive") >= 400.0,
        "{}",
        answer["timings"]
    );
    assert!(answer["_chunks"].as_array().unwrap().len() >= 10);
}

fn mermaid_arrows(diagram: &str) -> Vec<(String, String, String, usize)> {
    let mut lines = diagram.lines();
    assert_eq!(lines.next(), Some("sequenceDiagram"));
    let mut arrows = Vec::new();
    for line in lines {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("participant ") {
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric()), "{line}");
            continue;
        }
        let (head, text) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("not an arrow: {line}"));
        let (from, arrow, to) = if let Some((from, to)) = head.split_once("-->>") {
            (from, "-->>", to)
        } else if let Some((from, to)) = head.split_once("->>") {
            (from, "->>", to)
        } else {
            panic!("not an arrow: {line}");
        };
        assert!(!text.contains(';'), "`;` ends a Mermaid statement: {line}");
        let number: usize = text.split('.').next().unwrap().parse().unwrap();
        arrows.push((from.to_string(), arrow.to_string(), to.to_string(), number));
    }
    arrows
}

#[tokio::test]
async fn mermaid_is_a_sequence_diagram_of_the_numbered_messages() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_with(dir.path(), &["buy-milk.json"]).await;
    let log = sample("buy-milk.json");
    let diagram = export(&db, &[log.trace_id(), "--format", "mermaid"]);
    let arrows = mermaid_arrows(&diagram);
    let numbers: Vec<usize> = arrows.iter().map(|a| a.3).collect();
    assert_eq!(numbers, (1..=10).collect::<Vec<_>>());
    let walk: Vec<(&str, &str, &str)> = arrows
        .iter()
        .map(|(f, a, t, _)| (f.as_str(), a.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        walk,
        [
            ("you", "->>", "agent"),
            ("agent", "->>", "notes"),
            ("notes", "-->>", "agent"),
            ("agent", "->>", "ollama"),
            ("ollama", "-->>", "agent"),
            ("agent", "->>", "notes"),
            ("notes", "-->>", "agent"),
            ("agent", "->>", "ollama"),
            ("ollama", "-->>", "agent"),
            ("agent", "-->>", "you"),
        ]
    );
    assert!(
        diagram.contains("5. 200 the model asks for tool append"),
        "{diagram}"
    );

    let handout = export(&db, &[log.trace_id(), "--format", "md"]);
    assert!(handout.starts_with("# Trace: Add buy milk to my notes\n"));
    let fenced = handout
        .split("```mermaid\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    assert_eq!(mermaid_arrows(fenced).len(), 10);
    assert!(
        handout.contains("### 6. agent → notes: POST /mcp"),
        "{handout}"
    );
    assert!(handout.contains("The model remembers nothing between calls"));
    assert!(handout.contains("\"content\": \"buy milk\""));
}

fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

fn spans_of(document: &Value) -> Vec<Value> {
    document["resourceSpans"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["scopeSpans"].as_array().unwrap().clone())
        .flat_map(|s| s["spans"].as_array().unwrap().clone())
        .collect()
}

#[tokio::test]
async fn otlp_has_one_span_per_hop_with_gen_ai_and_mcp_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_with(dir.path(), &["read-notes.json", "tool-error-fixed.json"]).await;
    let log = sample("read-notes.json");
    let document: Value =
        serde_json::from_str(&export(&db, &[log.trace_id(), "--format", "otlp"])).unwrap();
    let spans = spans_of(&document);
    assert_eq!(spans.len(), 5);
    let root = spans.iter().find(|s| s["name"] == "invoke_agent").unwrap();
    for span in &spans {
        assert_eq!(span["traceId"], log.trace_id());
        let span_id = span["spanId"].as_str().unwrap();
        assert_eq!(span_id.len(), 16);
        assert!(
            span["startTimeUnixNano"]
                .as_str()
                .unwrap()
                .parse::<u64>()
                .is_ok()
        );
        if span != root {
            assert_eq!(span["parentSpanId"], root["spanId"]);
        }
    }
    let chat: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "chat qwen2.5:7b")
        .collect();
    assert_eq!(chat.len(), 2);
    assert_eq!(
        attribute(chat[0], "gen_ai.operation.name").unwrap()["stringValue"],
        "chat"
    );
    assert_eq!(
        attribute(chat[0], "gen_ai.request.model").unwrap()["stringValue"],
        "qwen2.5:7b"
    );
    assert_eq!(
        attribute(chat[0], "gen_ai.usage.input_tokens").unwrap()["intValue"],
        "402"
    );
    assert_eq!(
        attribute(chat[0], "gen_ai.usage.output_tokens").unwrap()["intValue"],
        "14"
    );
    let tool = spans
        .iter()
        .find(|s| s["name"] == "execute_tool read")
        .unwrap();
    assert_eq!(
        attribute(tool, "mcp.method.name").unwrap()["stringValue"],
        "tools/call"
    );
    assert_eq!(
        attribute(tool, "gen_ai.tool.name").unwrap()["stringValue"],
        "read"
    );
    let list = spans.iter().find(|s| s["name"] == "tools/list").unwrap();
    assert_eq!(
        attribute(list, "mcp.method.name").unwrap()["stringValue"],
        "tools/list"
    );

    let failing = sample("tool-error-fixed.json");
    let document: Value =
        serde_json::from_str(&export(&db, &[failing.trace_id(), "-f", "otlp"])).unwrap();
    let appends: Vec<Value> = spans_of(&document)
        .into_iter()
        .filter(|s| s["name"] == "execute_tool append")
        .collect();
    assert_eq!(appends.len(), 2);
    assert_eq!(appends[0]["status"]["code"], 2);
    assert_eq!(
        attribute(&appends[0], "error.type").unwrap()["stringValue"],
        "tool_error"
    );
    assert!(appends[1]["status"].get("code").is_none());
}

#[tokio::test]
async fn all_exports_every_trace_in_one_document_or_one_file_each() {
    let dir = tempfile::tempdir().unwrap();
    let names = sample_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let db = db_with(dir.path(), &refs).await;
    let hop_total: usize = names.iter().map(|n| sample(n).hops().len()).sum();

    let har_path = dir.path().join("all.har");
    export(
        &db,
        &["--all", "--format", "har", "-o", har_path.to_str().unwrap()],
    );
    let har: Value = serde_json::from_slice(&std::fs::read(&har_path).unwrap()).unwrap();
    assert_eq!(check_har(&har), hop_total);
    assert_eq!(har["log"]["pages"].as_array().unwrap().len(), names.len());

    let otlp: Value = serde_json::from_str(&export(&db, &["--all", "--format", "otlp"])).unwrap();
    // One span per hop, plus a root for each trace that no agent hop opened.
    let hop_spans = spans_of(&otlp)
        .iter()
        .filter(|s| attribute(s, "tracer.hop.id").is_some())
        .count();
    assert_eq!(hop_spans, hop_total);

    for format in ["json", "md", "mermaid"] {
        let out = dir.path().join(format!("out-{format}"));
        export(
            &db,
            &["--all", "--format", format, "-o", out.to_str().unwrap()],
        );
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            names.len(),
            "{format}"
        );
    }
    // The hop logs written by --all are the samples, byte for byte.
    for name in &names {
        let log = sample(name);
        let written = dir.path().join(format!("out-json/{}.json", log.trace_id()));
        assert_eq!(
            std::fs::read_to_string(written).unwrap(),
            std::fs::read_to_string(samples_dir().join(name)).unwrap(),
            "{name}"
        );
    }

    // A per-trace format with --all and no directory is refused, saying what to give.
    let output = cargo_bin_cmd!("tracer")
        .arg("--db")
        .arg(&db)
        .args(["export", "--all", "--format", "md"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("-o DIR"));
}

#[tokio::test]
async fn an_unknown_trace_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_with(dir.path(), &["buy-milk.json"]).await;
    let output = cargo_bin_cmd!("tracer")
        .arg("--db")
        .arg(&db)
        .args(["export", "ffffffff", "--format", "har"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("ffffffff"));
}

#[tokio::test]
async fn every_sample_imports_and_exports_as_show_prints_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    for name in sample_names() {
        let file = samples_dir().join(&name);
        let output = cargo_bin_cmd!("tracer")
            .arg("--db")
            .arg(&db)
            .arg("import")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "import {name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let id = sample(&name).trace_id().to_string();
        let exported = export(&db, &[&id, "--format", "json"]);
        let shown = cargo_bin_cmd!("tracer")
            .arg("--db")
            .arg(&db)
            .args(["show", &id, "--json"])
            .output()
            .unwrap();
        assert_eq!(exported, String::from_utf8(shown.stdout).unwrap(), "{name}");
        assert_eq!(exported, std::fs::read_to_string(&file).unwrap(), "{name}");
    }
}
