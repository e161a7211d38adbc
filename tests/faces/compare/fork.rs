//! `tracer fork`: the reference stack's buy-milk trace run again from a message on, the messages
//! before it answered from the recording, the edit made, the rest live, linked and diffed.

use serde_json::{Value, json};

use super::doubles::{description_reading_model, serve};

/// A model server answering with the last tool message it was sent.
fn tool_message_echo(body: &Value) -> Value {
    let said = (body["messages"].as_array().into_iter().flatten())
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .next_back()
        .unwrap_or("(no tool message)");
    json!({"model": body["model"], "done": true,
           "message": {"role": "assistant", "content": format!("the tool said: {said}")}})
}
use super::system::{Setup, System, json, stdout, tracer_in};
use crate::scripted_model::{Dialect, Reply, ScriptedModel};

fn answer(tool: &str, content: &str) -> Vec<Reply> {
    vec![
        Reply::call(tool, json!({ "content": content })),
        Reply::text("Done."),
    ]
}

fn start(model: &str) -> System {
    System::start(Setup {
        model: model.to_string(),
        mcp: None,
        max_steps: 5,
    })
}

/// `tracer fork ARGS…` on the system's notes file, as JSON.
async fn fork(system: &System, args: &[&str]) -> Value {
    let notes = system.dir.path().join("notes");
    let mut all = vec!["fork"];
    all.extend_from_slice(args);
    all.extend(["--notes", notes.to_str().unwrap(), "--json"]);
    let out = system.tracer(&all).await;
    assert!(
        out.status.success(),
        "{}\n{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

const EGGS: &str = "/messages/1/content=\"Add eggs to my notes\"";

/// The buy-milk trace recorded (the model scripted to append buy milk, then eggs), the proxy
/// stopped first when `stop_proxy`, then forked at its first model request with "Add eggs".
async fn eggs_fork(stop_proxy: bool) -> (System, ScriptedModel, String, Value) {
    let replies = [answer("append", "buy milk"), answer("append", "eggs")].concat();
    let model = ScriptedModel::start(Dialect::Ollama, replies).await;
    let mut system = start(&model.base_url);
    let original = system.ask("Add buy milk to my notes").await;
    if stop_proxy {
        system.stop_proxy();
    }
    // Message 4 is the first model request (1 you → agent, 2-3 tools/list).
    let done = fork(&system, &[&original, "--at", "4", "--set", EGGS]).await;
    (system, model, original, done)
}

/// The eggs fork's effects: the notes hold eggs once and no second buy milk, and the model saw
/// the original's 2 requests and the fork's 2 live ones, the edited one first.
fn assert_eggs_added_once(system: &System, model: &ScriptedModel) {
    let notes = notes_of(system);
    assert_eq!(notes.matches("eggs").count(), 1, "{notes}");
    assert_eq!(notes.matches("buy milk").count(), 1, "{notes}");
    let received = model.received();
    assert_eq!(received.len(), 4);
    assert_eq!(
        received[2].body["messages"][1]["content"],
        "Add eggs to my notes"
    );
}

fn notes_of(system: &System) -> String {
    std::fs::read_to_string(system.dir.path().join("notes")).unwrap()
}

/// The fork's hops, as `show --json` gives them.
async fn hops_of(system: &System, trace: &str) -> Vec<Value> {
    let shown = json(&system.tracer(&["show", trace, "--json"]).await);
    shown["hops"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_at_the_first_model_request_adds_eggs_and_nothing_before_it_is_sent_again() {
    let (system, model, original, done) = eggs_fork(false).await;
    let forked = done["trace"].as_str().unwrap().to_string();
    assert_ne!(forked, original);
    assert_eq!(
        done["host"], "reference",
        "the recording proxy still runs: {done}"
    );
    assert_eq!(done["replayed"], 1, "{done}");
    assert_eq!(done["live_at"], 4, "{done}");
    assert_eq!(done["went_live_early"], false);

    // The notes: eggs once, no second buy milk.
    assert_eggs_added_once(&system, &model);
    // The next step carries the edit in its history.
    let received = model.received();
    assert_eq!(
        received[3].body["messages"][1]["content"],
        "Add eggs to my notes"
    );
    // tools/list (before N) was answered by the fork's gate from the recording; the tools/call
    // after N went to the live server.
    let hops = hops_of(&system, &forked).await;
    let urls: Vec<&str> = hops.iter().filter_map(|h| h["url"].as_str()).collect();
    assert!(urls.iter().any(|u| u.contains("/r/0/mcp")), "{urls:?}");
    assert_eq!(
        urls.iter().filter(|u| u.contains("/r/")).count(),
        1,
        "{urls:?}"
    );
    // Hop N stores the edited body as sent; the original is unchanged.
    let exported =
        async |trace: &str| stdout(&system.tracer(&["export", trace, "--format", "json"]).await);
    assert!(exported(&forked).await.contains("Add eggs to my notes"));
    assert!(!exported(&original).await.contains("Add eggs"));

    // Linked: ls marks the fork, show names the edit, the diff names step 1.
    let listed = json(&system.tracer(&["ls", "--json"]).await);
    let row = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == forked.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["fork"]["of"], original.as_str(), "{row}");
    assert_eq!(row["fork"]["at"], 4);
    assert_eq!(row["fork"]["replayed"], 1);
    let text = stdout(&system.tracer(&["ls"]).await);
    assert!(
        text.contains(&format!("fork of {} at 4", &original[..8])),
        "{text}"
    );
    let shown = stdout(&system.tracer(&["show", &forked]).await);
    assert!(
        shown.contains(&format!("fork of trace {original} at message 4"))
            && shown.contains("/messages/1/content = \"Add eggs to my notes\""),
        "{shown}"
    );
    assert_eq!(done["parts_at"]["step"], 1, "the diff names step 1: {done}");
    assert_eq!(done["parts_at"]["what"], "the tool calls differ");
    let steps = done["diff"]["steps"].as_array().unwrap().clone();
    assert_eq!(
        steps[0]["same_tool_calls"], false,
        "step 1 is where the runs part"
    );
    assert_eq!(steps[1]["same_tool_calls"], true);
    let out = system
        .tracer(&[
            "fork",
            &original,
            "--at",
            "4",
            "--set",
            "/messages/9/content=\"x\"",
        ])
        .await;
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("message 4: --set /messages/9/content"),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_at_the_tool_result_with_error_hands_the_model_the_error() {
    let model = ScriptedModel::start(Dialect::Ollama, answer("append", "buy milk")).await;
    let system = start(&model.base_url);
    let original = system.ask("Add buy milk to my notes").await;
    // The live part goes to another model server (--upstream), which says what the tool
    // message it was sent carries.
    let live = format!("http://{}", serve(tool_message_echo).await);
    // Message 7 is append's result.
    let done = fork(
        &system,
        &[
            &original,
            "--at",
            "7",
            "--error",
            "disk full",
            "--upstream",
            &live,
        ],
    )
    .await;
    assert_eq!(done["replayed"], 2, "{done}");
    assert_eq!(
        model.received().len(),
        2,
        "the recorded model saw nothing of the fork"
    );
    assert_eq!(
        done["diff"]["reply_b"], "the tool said: Error from tool append: disk full",
        "{done}"
    );
    assert_eq!(done["parts_at"]["what"], "a tool result differs", "{done}");
    let step = &done["diff"]["steps"][0]["b"]["calls"][0]["outcome"];
    assert_eq!(step["text"], "disk full", "{step}");
    // The replayed tools/call did not run again, and the failed one never ran.
    assert_eq!(notes_of(&system).matches("buy milk").count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_description_edit_changes_which_tool_the_model_picks() {
    let model = description_reading_model().await;
    let system = start(&model);
    let original = system.ask("Add buy milk to my notes").await;
    let recorded = json(&system.tracer(&["show", &original, "--json"]).await);
    assert!(
        recorded.to_string().contains("append"),
        "the model picks append first"
    );
    let done = fork(
        &system,
        &[
            &original,
            "--at",
            "4",
            "--tool-description",
            "append=Appends text.",
            "--tool-description",
            "write=Add the note by writing the whole file.",
        ],
    )
    .await;
    let summary = done["diff"]["summary"].as_str().unwrap_or("");
    assert!(summary.contains("different tools"), "{summary}");
    let calls = done["diff"]["tool_calls_b"].to_string();
    assert!(calls.contains("write"), "{}", done["diff"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_before_n_that_matches_no_recording_goes_live_there_and_says_why() {
    let replies = [answer("append", "buy milk"), answer("append", "buy milk")].concat();
    let model = ScriptedModel::start(Dialect::Ollama, replies).await;
    let system = start(&model.base_url);
    let original = system.ask("Add buy milk to my notes").await;
    // The recording's world changed: its first model request asked about bread. Imported into
    // another database, it is forked at the second model request (message 8).
    let log = system.dir.path().join("trace.json");
    let out = system
        .tracer(&[
            "export",
            &original,
            "--format",
            "json",
            "-o",
            log.to_str().unwrap(),
        ])
        .await;
    assert!(out.status.success(), "{out:?}");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    let message = doc["messages"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["number"] == 4)
        .unwrap();
    assert_eq!(
        message["body"]["json"]["messages"][1]["content"],
        "Add buy milk to my notes"
    );
    message["body"]["json"]["messages"][1]["content"] = json!("Add bread to my notes");
    std::fs::write(&log, doc.to_string()).unwrap();
    let other = system.dir.path().join("other.db");
    let imported = tracer_in(&other, &["import", log.to_str().unwrap()]).await;
    assert!(imported.status.success(), "{imported:?}");
    let notes = system.dir.path().join("notes");
    let out = tracer_in(
        &other,
        &[
            "fork",
            &original,
            "--at",
            "8",
            "--model",
            "m2",
            "--notes",
            notes.to_str().unwrap(),
        ],
    )
    .await;
    let said = stdout(&out);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("the replay ended early, live from message 4: the model request sent at message 4 differs from the recording"),
        "{said}"
    );
    assert!(said.contains("bread"), "{said}");
    assert!(
        said.contains("the edit at message 8 was not made"),
        "{said}"
    );
    // From there on it is live: the model was asked (with the recorded model name: no edit).
    let received = model.received();
    assert_eq!(received.len(), 4);
    assert_ne!(received[2].body["model"], "m2");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_after_a_host_run_tool_is_refused_listing_the_calls_it_would_repeat() {
    // A real Claude Code 2.1.197 run: it asked for Bash `echo hello` (run by the host itself),
    // then for the MCP append, then answered.
    let dir = tempfile::tempdir().unwrap();
    let db = crate::agent_telemetry::unzipped_db(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/agents/claude-code/sources-wire/wire.db.gz"
        ),
        dir.path(),
    );
    let listed = json(&tracer_in(&db, &["ls", "--json"]).await);
    let trace = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["host_tools_used"].to_string().contains("Bash"))
        .unwrap_or_else(|| panic!("{listed}"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let shown = json(&tracer_in(&db, &["show", &trace, "--json"]).await);
    let last_model_request = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["case"]
                .as_str()
                .is_some_and(|c| c.starts_with("model_request"))
        })
        .filter_map(|m| m["number"].as_u64())
        .max()
        .unwrap()
        .to_string();
    let out = tracer_in(&db, &["fork", &trace, "--at", &last_model_request]).await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("not started. Before message")
            && said.contains("the host runs these tools itself")
            && said.contains("Bash {\"command\":\"echo hello\"")
            && said.contains("--allow-local-tools"),
        "{said}"
    );
    // Nothing was written: no fork, no new trace.
    let after = json(&tracer_in(&db, &["ls", "--json"]).await);
    assert_eq!(
        after.as_array().unwrap().len(),
        listed.as_array().unwrap().len()
    );
    // A fork at the first model request repeats no host-run call, and is not refused for it.
    let first_model_request = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["case"] == "model_request")
        .and_then(|m| m["number"].as_u64())
        .unwrap()
        .to_string();
    let out = tracer_in(&db, &["fork", &trace, "--at", &first_model_request]).await;
    assert_ne!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn interop_ui_badges_a_fork_names_its_edit_and_builds_the_fork_command() {
    let Some(peers) = crate::interop_ui::peers() else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (system, _model, original, done) = runtime.block_on(eggs_fork(false));
    let forked = done["trace"].as_str().unwrap().to_string();
    let server = crate::interop_ui::ui(&system.db, crate::free_ports::free_port());
    let shots = system.dir.path().join("shots");
    let result = crate::interop_ui::run(
        &peers,
        &server.url,
        "fork",
        &[
            "--db",
            system.db.to_str().unwrap(),
            "--trace",
            &forked,
            "--original",
            &original,
            "--shots",
            shots.to_str().unwrap(),
        ],
    );
    // The page with "fork from here" open, kept where docs/ui-fork.png is made from.
    let shot = shots.join("ui-fork.png");
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);
    let kept = concat!(env!("CARGO_MANIFEST_DIR"), "/target/ui-fork.png");
    let _ = std::fs::copy(&shot, kept);
    crate::interop_ui::assert_clean(&result);
    assert_eq!(result["badge"], format!("fork of {} at 4", &original[..8]));
    assert_eq!(result["other_badges"], 0, "only the fork is badged");
    let line = result["line"].as_str().unwrap();
    assert!(
        line.starts_with(&format!(
            "fork of {} at message 4: /messages/1/content = \"Add eggs to my notes\"",
            &original[..8]
        )) && line.contains("1 from the recording, live from message 4"),
        "{line}"
    );
    assert_eq!(
        result["command"],
        format!("tracer fork {original} --at 7 --model qwen3:8b --error 'disk'\\''s full'")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_agent_is_forked_through_the_recorded_routes_once_their_proxy_stopped() {
    // notes-agent and notes-server still run, pointed at the stopped proxy's addresses.
    let (system, model, _original, done) = eggs_fork(true).await;
    assert_eq!(done["host"], "routes", "{done}");
    assert_eq!(done["replayed"], 1, "{done}");
    assert_eq!(done["parts_at"]["step"], 1, "{done}");
    // The running notes-server wrote eggs; the model saw the fork's live requests only.
    assert_eggs_added_once(&system, &model);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_websocket_session_before_n_is_named_as_not_replayed() {
    // Codex over WebSocket (a real run's sample): its Responses turns travel in one upgraded
    // connection, passed through live, so a fork after it would reach the model again.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/sample-traces/agents/codex-websocket.json"
    );
    let imported = tracer_in(&db, &["import", sample]).await;
    assert!(imported.status.success(), "{imported:?}");
    let listed = json(&tracer_in(&db, &["ls", "--json"]).await);
    let trace = listed[0]["id"].as_str().unwrap().to_string();
    // Message 10 is append's tools/call, after the session opened at message 1.
    let out = tracer_in(&db, &["fork", &trace, "--at", "10"]).await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("message 1: a WebSocket session (GET /v1/responses)")
            && said.contains("its turns reach the model again"),
        "{said}"
    );
    // A turn inside the session cannot be N.
    let out = tracer_in(&db, &["fork", &trace, "--at", "8"]).await;
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("message 8 is not an HTTP exchange"),
        "{out:?}"
    );
}
