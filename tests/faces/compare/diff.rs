//! `tracer diff`: identical runs, runs whose tool or arguments differ, hop-log files.

use serde_json::json;

use super::system::{Setup, System, json, stdout};
use crate::scripted_model::{Dialect, Reply, ScriptedModel};

fn add(content: &str) -> Vec<Reply> {
    vec![
        Reply::call("append", json!({ "content": content })),
        Reply::text(&format!("I've added \"{content}\" to your notes.")),
    ]
}

async fn system(replies: Vec<Reply>) -> (System, ScriptedModel) {
    let model = ScriptedModel::start(Dialect::Ollama, replies).await;
    let system = System::start(Setup {
        model: model.base_url.clone(),
        mcp: None,
        max_steps: 5,
    });
    (system, model)
}

#[tokio::test(flavor = "multi_thread")]
async fn identical_runs_have_the_same_tools_arguments_and_reply() {
    let (system, _model) = system([add("buy milk"), add("buy milk")].concat()).await;
    let a = system.ask("Add buy milk to my notes").await;
    let b = system.ask("Add buy milk to my notes").await;

    let text = system.tracer(&["diff", &a, &b]).await;
    assert!(text.status.success(), "{text:?}");
    let text = stdout(&text);
    let first = text.lines().next().unwrap();
    assert!(
        // The notes file grew between the runs, so append's result says so.
        first.starts_with("same tools and arguments; a tool result differs; the same reply"),
        "{text}"
    );
    assert!(
        text.contains(r#"append {"content":"buy milk"} → ok"#),
        "{text}"
    );

    let doc = json(&system.tracer(&["diff", &a[..8], &b, "--json"]).await);
    assert_eq!(doc["a"], a.as_str());
    assert_eq!(doc["b"], b.as_str());
    assert_eq!(doc["same_tool_calls"], true);
    let call = json!([{"name": "append", "arguments": {"content": "buy milk"}}]);
    assert_eq!(doc["tool_calls_a"], call);
    assert_eq!(doc["tool_calls_b"], call);
    assert_eq!(doc["reply_a"], doc["reply_b"]);
    assert_eq!(doc["summary"].as_str().unwrap(), first);
    // Two steps each: the call to append, then the answer with the whole history resent
    // (system, user, the model's call, the tool result).
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["a"]["messages"], 2);
    assert_eq!(steps[1]["a"]["messages"], 4);
    assert_eq!(steps[0]["a"]["tokens"]["prompt"], 11);
    assert_eq!(steps[0]["a"]["tools_offered"], 5);
    assert_eq!(steps[0]["same_tool_calls"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_whose_tool_or_arguments_differ_are_told_apart() {
    let wrong_tool = vec![
        Reply::call("write", json!({ "content": "buy milk" })),
        Reply::text("Your notes now say buy milk."),
    ];
    let (system, _model) = system([add("buy milk"), wrong_tool, add("buy eggs")].concat()).await;
    let append = system.ask("Add buy milk to my notes").await;
    let write = system.ask("Add buy milk to my notes").await;
    let eggs = system.ask("Add buy milk to my notes").await;

    let doc = json(&system.tracer(&["diff", &append, &write, "--json"]).await);
    assert_eq!(doc["same_tool_calls"], false);
    let summary = doc["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("different tools (A: append; B: write); the reply differs"),
        "{summary}"
    );
    assert_eq!(doc["tool_calls_b"][0]["name"], "write");
    assert_eq!(doc["steps"][0]["same_tool_calls"], false);
    assert_eq!(
        doc["steps"][1]["same_tool_calls"], true,
        "the answers call nothing"
    );

    let text = stdout(&system.tracer(&["diff", &append, &eggs]).await);
    assert!(
        text.starts_with("same tools, different arguments; the reply differs"),
        "{text}"
    );
    assert!(
        text.contains(r#"B  "#) && text.contains(r#"append {"content":"buy eggs"}"#),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hop_log_files_diff_like_the_traces_they_hold() {
    let wrong_tool = vec![
        Reply::call("write", json!({ "content": "buy milk" })),
        Reply::text("Your notes now say buy milk."),
    ];
    let (system, _model) = system([add("buy milk"), wrong_tool].concat()).await;
    let a = system.ask("Add buy milk to my notes").await;
    let b = system.ask("Add buy milk to my notes").await;
    let files: Vec<String> = [&a, &b]
        .iter()
        .map(|id| {
            system
                .dir
                .path()
                .join(format!("{id}.json"))
                .display()
                .to_string()
        })
        .collect();
    for (id, file) in [&a, &b].iter().zip(&files) {
        let out = system.tracer(&["export", id, "-o", file]).await;
        assert!(out.status.success(), "{out:?}");
    }
    let from_db = json(&system.tracer(&["diff", &a, &b, "--json"]).await);
    let from_files = json(
        &system
            .tracer(&["diff", &files[0], &files[1], "--json"])
            .await,
    );
    assert_eq!(from_files["summary"], from_db["summary"]);
    assert_eq!(from_files["tool_calls_b"], from_db["tool_calls_b"]);
    assert_eq!(from_files["steps"], from_db["steps"]);
    // A file and a trace id mix; a file that is not a hop log is a clear error.
    let mixed = json(&system.tracer(&["diff", &files[0], &a, "--json"]).await);
    assert_eq!(mixed["same_tool_calls"], true);
    let bogus = system.dir.path().join("bogus.json");
    std::fs::write(&bogus, "{}").unwrap();
    let out = system.tracer(&["diff", bogus.to_str().unwrap(), &a]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bogus.json"), "{stderr}");
}
