//! The loop against the real notes-server: buy milk, a tool error then a corrected call, an
//! invented tool, the step limit, thinking kept apart, streamed NDJSON and the OpenAI dialect.

use serde_json::{Value, json};
use tracer_reference::agent::ModelApi;
use tracer_reference::agent::config::DEFAULT_SYSTEM_PROMPT;

use super::harness::{NotesServerHandle, ask, config, start_agent};
use super::scripted_model::{Dialect, Reply, ScriptedModel};

const ANSWER: &str = "I've added \"buy milk\" to your notes.";

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().unwrap()
}

#[tokio::test]
async fn buy_milk_appends_then_answers() {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("append", json!({"content": "buy milk"})),
            Reply::text(ANSWER),
        ],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    let reply = ask(&agent, "Add buy milk to my notes").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.headers["content-type"], "application/json");
    let reply = reply.json();
    assert_eq!(reply["reply"], ANSWER);
    assert_eq!(reply["steps"], 2);
    assert_eq!(reply["model"], "qwen2.5:7b");
    assert_eq!(reply["step_limit_reached"], false);
    assert!(reply.get("thinking").is_none());
    let calls = reply["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["server"], "notes-server");
    assert_eq!(calls[0]["name"], "append");
    assert_eq!(calls[0]["arguments"], json!({"content": "buy milk"}));
    assert_eq!(calls[0]["is_error"], false);
    assert!(calls[0]["duration_ms"].is_u64());
    assert!(
        notes.notes().lines().any(|line| line == "buy milk"),
        "notes: {:?}",
        notes.notes()
    );

    let received = model.received();
    assert_eq!(received.len(), 2);
    assert!(received.iter().all(|r| r.path == "/api/chat"));
    let first = &received[0].body;
    assert_eq!(first["model"], "qwen2.5:7b");
    assert_eq!(first["stream"], false);
    assert_eq!(first["keep_alive"], "30m");
    assert_eq!(
        messages(first)[0],
        json!({"role": "system", "content": DEFAULT_SYSTEM_PROMPT})
    );
    assert_eq!(
        messages(first)[1],
        json!({"role": "user", "content": "Add buy milk to my notes"})
    );
    let tool_names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tool_names, ["read", "write", "append", "update", "clear"]);
    let append = &first["tools"][2]["function"];
    assert_eq!(
        append["parameters"]["required"],
        json!(["content"]),
        "inputSchema goes over as parameters"
    );
    // The second call resends everything (checked by the scripted model) and ends with the result.
    let second = messages(&received[1].body);
    assert_eq!(second.len(), 4);
    assert_eq!(second[3]["role"], "tool");
    assert_eq!(second[3]["tool_name"], "append");
    assert_eq!(second[3]["content"], calls[0]["output"]);
}

#[tokio::test]
async fn a_tool_error_goes_back_and_the_corrected_call_runs() {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("append", json!({"text": "buy milk"})),
            Reply::call("append", json!({"content": "buy milk"})),
            Reply::text(ANSWER),
        ],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    let reply = ask(&agent, "Add buy milk to my notes").await.json();
    let calls = reply["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["is_error"], true);
    let error_text = calls[0]["output"].as_str().unwrap();
    assert!(
        error_text.starts_with("Error from tool append: "),
        "{error_text}"
    );
    assert!(
        error_text.contains("content"),
        "the error says what was wrong: {error_text}"
    );
    assert_eq!(calls[1]["is_error"], false);
    assert_eq!(reply["steps"], 3);
    assert_eq!(notes.notes().matches("buy milk").count(), 1);
    let received = model.received();
    assert_eq!(
        messages(&received[1].body).last().unwrap()["content"],
        error_text
    );
}

#[tokio::test]
async fn an_invented_tool_is_told_it_does_not_exist() {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("delete_everything", json!({})),
            Reply::text("I cannot do that."),
        ],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    let reply = ask(&agent, "Delete everything").await.json();
    let call = &reply["tool_calls"][0];
    assert_eq!(call["server"], Value::Null);
    assert_eq!(call["is_error"], true);
    assert_eq!(
        call["output"],
        "Error: there is no tool named \"delete_everything\". The tools you can call are: read, write, append, update, clear."
    );
    assert_eq!(reply["reply"], "I cannot do that.");
}

#[tokio::test]
async fn the_step_limit_asks_once_more_without_tools() {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("read", json!({})),
            Reply::call("read", json!({})),
            Reply::text("Your notes are empty."),
        ],
    )
    .await;
    let mut config = config(ModelApi::Ollama, &model.base_url, vec![notes.spec()]);
    config.max_steps = 2;
    let agent = start_agent(config).await;

    let reply = ask(&agent, "What is in my notes?").await.json();
    assert_eq!(reply["steps"], 3);
    assert_eq!(reply["step_limit_reached"], true);
    assert_eq!(reply["tool_calls"].as_array().unwrap().len(), 2);
    let text = reply["reply"].as_str().unwrap();
    assert!(
        text.starts_with("Your notes are empty.\n\n(Stopped after 2 tool rounds"),
        "{text}"
    );
    let received = model.received();
    assert!(received[0].body.get("tools").is_some() && received[1].body.get("tools").is_some());
    assert!(
        received[2].body.get("tools").is_none(),
        "the last call goes without tools"
    );
}

#[tokio::test]
async fn thinking_is_kept_apart_from_the_reply() {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![Reply::text("<think>The user greets me.</think>\n\nHello!").thinking("Native trace.")],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    let reply = ask(&agent, "Hi").await.json();
    assert_eq!(reply["reply"], "Hello!");
    assert_eq!(reply["thinking"], "Native trace.\n\nThe user greets me.");
    assert_eq!(reply["tool_calls"], json!([]));
}

#[tokio::test]
async fn streamed_ndjson_is_read_into_the_same_loop() {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("append", json!({"content": "buy milk"})).thinking("I should append."),
            Reply::text(ANSWER),
        ],
    )
    .await;
    let mut config = config(ModelApi::Ollama, &model.base_url, vec![notes.spec()]);
    config.stream = true;
    let agent = start_agent(config).await;

    let reply = ask(&agent, "Add buy milk to my notes").await.json();
    assert_eq!(reply["reply"], ANSWER);
    assert_eq!(reply["thinking"], "I should append.");
    assert_eq!(reply["tool_calls"][0]["name"], "append");
    assert!(model.received().iter().all(|r| r.body["stream"] == true));
    // The streamed thinking is replayed with the model's turn, as Ollama's docs ask.
    assert_eq!(
        messages(&model.received()[1].body)[2]["thinking"],
        "I should append."
    );
    assert!(notes.notes().contains("buy milk"));
}

async fn openai_buy_milk(stream: bool) {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::OpenAi,
        vec![
            Reply::call("append", json!({"content": "buy milk"})),
            Reply::text(ANSWER),
        ],
    )
    .await;
    let mut config = config(ModelApi::OpenAi, &model.base_url, vec![notes.spec()]);
    config.api_key = Some("sk-test-key".into());
    config.stream = stream;
    config.model = "gemma3".into();
    let agent = start_agent(config).await;

    let reply = ask(&agent, "Add buy milk to my notes").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let reply = reply.json();
    assert_eq!(reply["reply"], ANSWER);
    assert_eq!(reply["model"], "gemma3");
    assert_eq!(
        reply["tool_calls"][0]["arguments"],
        json!({"content": "buy milk"})
    );
    assert!(notes.notes().contains("buy milk"));
    let received = model.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.headers["authorization"], "Bearer sk-test-key");
        assert_eq!(request.body.get("stream").is_some(), stream);
        assert!(request.body.get("keep_alive").is_none());
    }
    let second = messages(&received[1].body);
    assert_eq!(
        second[2]["tool_calls"][0]["function"]["arguments"],
        "{\"content\":\"buy milk\"}"
    );
    assert_eq!(second[3]["tool_call_id"], second[2]["tool_calls"][0]["id"]);
}

#[tokio::test]
async fn the_openai_dialect_works_whole() {
    openai_buy_milk(false).await;
}

#[tokio::test]
async fn the_openai_dialect_works_streamed_with_fragmented_arguments() {
    openai_buy_milk(true).await;
}

#[tokio::test]
async fn openai_arguments_that_are_not_json_go_back_to_the_model() {
    let notes = NotesServerHandle::start().await;
    let mut broken = Reply::call("append", json!(null));
    broken.calls[0].raw_arguments = Some("{\"content\": \"buy".into());
    let model = ScriptedModel::start(Dialect::OpenAi, vec![broken, Reply::text("Sorry.")]).await;
    let agent = start_agent(config(
        ModelApi::OpenAi,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    let reply = ask(&agent, "Add buy milk").await.json();
    let call = &reply["tool_calls"][0];
    assert_eq!(call["is_error"], true);
    assert_eq!(call["arguments"], "{\"content\": \"buy");
    assert!(
        call["output"].as_str().unwrap().contains("not valid JSON"),
        "{call}"
    );
    assert_eq!(notes.notes(), "");
}

#[tokio::test]
async fn the_articles_ollama_without_call_ids_gets_the_articles_tool_message() {
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("append", json!({"content": "buy milk"})).without_ids(),
            Reply::text("Added."),
        ],
    )
    .await;
    let mut config = config(ModelApi::Ollama, &model.base_url, vec![notes.spec()]);
    config.system_prompt = None;
    let agent = start_agent(config).await;

    assert_eq!(ask(&agent, "Add buy milk to my notes").await.status, 200);
    let second = model.received()[1].body["messages"].clone();
    let tool_output = second[2]["content"].clone();
    assert_eq!(
        second,
        json!([
            {"role": "user", "content": "Add buy milk to my notes"},
            {"role": "assistant", "content": "",
             "tool_calls": [{"function": {"index": 0, "name": "append", "arguments": {"content": "buy milk"}}}]},
            {"role": "tool", "content": tool_output, "tool_name": "append"}
        ])
    );
}
