//! Interop: the official OpenAI Python SDK drives `/v1/chat/completions` (whole and streamed)
//! against the agent, with the scripted model and the real notes-server behind it.
//! Needs `.venv` with `pip install openai`; skipped without it unless `TRACER_INTEROP=1`.

use std::path::PathBuf;

use serde_json::{Value, json};
use tracer::reference::agent::ModelApi;

use crate::harness::{NotesServerHandle, config, start_agent};
use crate::scripted_model::{Dialect, Reply, ScriptedModel};

fn venv_python() -> Option<PathBuf> {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    let required = std::env::var("TRACER_INTEROP").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "TRACER_INTEROP=1 but {} is missing: run `python3 -m venv .venv && .venv/bin/pip install openai`",
        python.display()
    );
    eprintln!(
        "skipping: {} is missing (python3 -m venv .venv && .venv/bin/pip install openai)",
        python.display()
    );
    None
}

#[tokio::test]
async fn the_openai_python_sdk_drives_the_agent() {
    let Some(python) = venv_python() else { return };
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::OpenAi,
        vec![
            Reply::call("append", json!({"content": "buy milk"})),
            Reply::text("Added buy milk."),
            Reply::call("append", json!({"content": "buy eggs"})),
            Reply::text("Added buy eggs."),
        ],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::OpenAi,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/openai_client.py");

    let output = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        tokio::process::Command::new(&python)
            .arg(&script)
            .arg(format!("{agent}/v1"))
            .output(),
    )
    .await
    .expect("the SDK script timed out")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the SDK script failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    eprintln!("openai SDK {}", summary["openai_version"]);
    assert_eq!(summary["models"], json!(["qwen2.5:7b"]));
    assert_eq!(
        summary["plain"]["content"],
        "Added buy milk.\n\n---\nTools used: append"
    );
    assert_eq!(summary["plain"]["finish_reason"], "stop");
    assert_eq!(summary["plain"]["role"], "assistant");
    assert_eq!(
        summary["stream"]["content"],
        "Added buy eggs.\n\n---\nTools used: append"
    );
    assert!(
        summary["stream"]["chunks_with_text"].as_u64().unwrap() > 2,
        "the answer arrives in pieces"
    );
    assert_eq!(summary["stream"]["total_tokens"], 36);
    assert_eq!(summary["bad_request"]["status"], 400);
    assert_eq!(notes.notes(), "buy milk\nbuy eggs\n");
}
