//! `tracer eval --compare`: two stored runs question by question; `--min-pass` on both sides.

use serde_json::{Value, json};

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

    // Cost: the agent's model is not in the vendored table, so every sum is unknown, never $0.
    let run = stdout(&system.tracer(&["eval", "--show", "1"]).await);
    assert!(run.contains("COST"), "{run}");
    assert!(
        run.contains("cost: unknown across 4 calls (qwen2.5:7b is not in the price table)"),
        "{run}"
    );
    assert!(!run.contains("$0.0000"), "{run}");
    assert!(text.contains("cost: A unknown, B unknown ("), "{text}");
    assert_eq!(doc["cost_change_usd"], Value::Null);
    // Priced with --prices (11 tokens in and 7 out a call, as the scripted model reports):
    // 11 × $0.001 + 7 × $0.01 = $0.081 a call, four calls a run.
    let prices = system.dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"qwen2.5:7b": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.01}}"#,
    )
    .unwrap();
    let prices = prices.to_str().unwrap();
    let run = stdout(
        &system
            .tracer(&["--prices", prices, "eval", "--show", "1"])
            .await,
    );
    assert!(run.contains("add-milk  pass    "), "{run}");
    assert!(run.contains("≈ $0.1620"), "{run}");
    assert!(
        run.contains("cost: ≈ $0.3240 billed across 4 calls (estimate at list prices"),
        "{run}"
    );
    let priced = stdout(
        &system
            .tracer(&["--prices", prices, "eval", "--compare", "1", "2"])
            .await,
    );
    assert!(
        priced.contains("cost: A ≈ $0.3240, B ≈ $0.3240 (+$0.0000, +0%)"),
        "{priced}"
    );
    let doc = json(
        &system
            .tracer(&["--prices", prices, "eval", "--compare", "1", "2", "--json"])
            .await,
    );
    assert_eq!(doc["a"]["cost"]["calls"], 4);
    assert!((doc["a"]["cost"]["usd"].as_f64().unwrap() - 0.324).abs() < 1e-9);
    assert_eq!(doc["cost_change_usd"], 0.0);

    let missing = system.tracer(&["eval", "--compare", "1", "9"]).await;
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("eval run 9 not found"));
}
