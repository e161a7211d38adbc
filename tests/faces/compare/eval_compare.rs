//! `tracer eval --compare`: two stored runs question by question; `--min-pass` on both sides.

use serde_json::json;

use super::system::{Setup, System, json, stdout};
use crate::scripted_model::{Dialect, Reply, ScriptedModel};

const QUESTIONS: &str = r#"
[[question]]
id = "add-milk"
ask = "Add buy milk to my notes"
calls = [{ tool = "append", args = { content = { contains = "milk" } } }]
forbid = ["write", "clear"]

[[question]]
id = "read"
ask = "What is in my notes?"
calls = [{ tool = "read" }]
forbid = ["write", "append", "update", "clear"]
"#;

#[tokio::test(flavor = "multi_thread")]
async fn two_runs_compare_question_by_question() {
    let replies = vec![
        // Run 1: add-milk passes, read fails (the model writes).
        Reply::call("append", json!({"content": "buy milk"})),
        Reply::text("Added."),
        Reply::call("write", json!({"content": ""})),
        Reply::text("Done."),
        // Run 2: add-milk fails (write), read passes.
        Reply::call("write", json!({"content": "buy milk"})),
        Reply::text("Added."),
        Reply::call("read", json!({})),
        Reply::text("Your notes say buy milk."),
    ];
    let model = ScriptedModel::start(Dialect::Ollama, replies).await;
    let system = System::start(Setup {
        model: model.base_url.clone(),
        mcp: None,
        max_steps: 5,
    });
    let set = system.dir.path().join("set.toml");
    std::fs::write(&set, QUESTIONS).unwrap();
    let set = set.to_str().unwrap();
    let first = system
        .tracer(&[
            "eval",
            set,
            "--agent",
            &system.agent,
            "--label",
            "before",
            "--min-pass",
            "2",
        ])
        .await;
    assert_eq!(first.status.code(), Some(1), "{first:?}");
    let text = stdout(&first);
    assert!(text.contains("1/2 passed (run 1 \"before\")"), "{text}");
    assert!(
        text.contains("FAIL") && text.contains("forbidden_tool"),
        "{text}"
    );
    let second = system
        .tracer(&[
            "eval",
            set,
            "--agent",
            &system.agent,
            "--label",
            "after",
            "--min-pass",
            "1",
        ])
        .await;
    assert_eq!(second.status.code(), Some(0), "{second:?}");

    let text = stdout(&system.tracer(&["eval", "--compare", "1", "2"]).await);
    assert!(
        text.starts_with("1 fixed, 1 broken, 0 still failing, 0 passing in both"),
        "{text}"
    );
    assert!(text.contains("add-milk  pass  fail  broken"), "{text}");
    assert!(text.contains("A: 1/2 passed (run 1 \"before\")"), "{text}");
    assert!(text.contains("B: 1/2 passed (run 2 \"after\")"), "{text}");
    let doc = json(
        &system
            .tracer(&["eval", "--compare", "1", "2", "--json"])
            .await,
    );
    assert_eq!(
        doc["questions"],
        json!([
            {"id": "add-milk", "a": true, "b": false, "change": "broken"},
            {"id": "read", "a": false, "b": true, "change": "fixed"},
        ])
    );
    assert_eq!(doc["a"]["label"], "before");
    assert_eq!(doc["b"]["passed"], 1);

    let missing = system.tracer(&["eval", "--compare", "1", "9"]).await;
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("eval run 9 not found"));
}
