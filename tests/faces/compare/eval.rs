//! `tracer eval`: a question set where one question passes and the others fail for each reason,
//! judged from the recorded traces; stored, listed; `--min-pass`; Ctrl-C keeps a partial run.

use serde_json::{Value, json};

use super::system::{Setup, System, ctrl_c, json, output_of, stdout, tracer_asking};
use crate::scripted_model::{Dialect, Reply, ScriptedModel};

const QUESTIONS: &str = r#"
[[question]]
id = "pass"
ask = "Add buy milk to my notes"
calls = [{ tool = "append", args = { content = { contains = "milk" } } }]
forbid = ["write", "clear"]
reply_contains = "milk"

[[question]]
id = "wrong-tool"
ask = "Add eggs to my notes"
calls = [{ tool = "append" }]

[[question]]
id = "wrong-args"
ask = "Add bread to my notes"
calls = [{ tool = "append", args = { content = { regex = "(?i)bread" } } }]

[[question]]
id = "no-tool-call"
ask = "Add jam to my notes"
calls = [{ tool = "append" }]

[[question]]
id = "extra-call"
ask = "What is in my notes?"
calls = [{ tool = "read" }]

[[question]]
id = "forbidden-tool"
ask = "Show me my notes"
calls = [{ tool = "read" }]
forbid = ["clear"]

[[question]]
id = "tool-error"
ask = "Change caviar to salmon in my notes"
calls = [{ tool = "update", args = { search = "caviar" } }]

[[question]]
id = "step-limit"
ask = "Keep reading my notes"
calls = [{ tool = "read" }]
allow = ["read"]

[[question]]
id = "reply-mismatch"
ask = "What is the capital of France?"
calls = []
reply_contains = "Paris"

[[question]]
id = "agent-error"
ask = "Add tea to my notes"
calls = [{ tool = "append" }]
"#;

/// One scripted answer per question above, in order (the last question finds none left).
fn script() -> Vec<Reply> {
    let call = |tool: &str, args: Value| Reply::call(tool, args);
    vec![
        call("append", json!({"content": "buy milk"})),
        Reply::text("I added buy milk."),
        call("write", json!({"content": "eggs"})),
        Reply::text("Done."),
        call("append", json!({"content": "butter"})),
        Reply::text("Done."),
        Reply::text("Sure, noted!"),
        call("read", json!({})).and_call("append", json!({"content": "x"})),
        Reply::text("Your notes say x."),
        call("read", json!({})).and_call("clear", json!({})),
        Reply::text("Here they were."),
        call("update", json!({"search": "caviar", "replace": "salmon"})),
        Reply::text("There is no caviar."),
        call("read", json!({})),
        call("read", json!({})),
        Reply::text("I kept reading."),
        Reply::text("I do not know."),
    ]
}

fn first_reason(doc: &Value, id: &str) -> Value {
    let question = doc["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["id"] == id)
        .unwrap_or_else(|| panic!("no question {id}: {doc}"));
    question["runs"][0]["reasons"][0].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_failure_reason_is_judged_from_the_wire_and_stored() {
    let model = ScriptedModel::start(Dialect::Ollama, script()).await;
    let system = System::start(Setup {
        model: model.base_url.clone(),
        mcp: None,
        max_steps: 2,
    });
    let set = system.dir.path().join("set.toml");
    std::fs::write(&set, QUESTIONS).unwrap();
    let out = system
        .tracer(&[
            "eval",
            set.to_str().unwrap(),
            "--agent",
            &system.agent,
            "--label",
            "reasons",
            "--json",
            "--min-pass",
            "2",
        ])
        .await;
    assert_eq!(out.status.code(), Some(1), "below --min-pass: {out:?}");
    let doc = json(&out);
    assert_eq!(doc["run"], 1);
    assert_eq!(doc["label"], "reasons");
    assert_eq!(doc["passed"], 1);
    assert_eq!(doc["total"], 10);
    let pass = &doc["questions"][0];
    assert_eq!(pass["id"], "pass");
    assert_eq!(pass["passed"], true);
    assert_eq!(pass["runs"][0]["pass"], true);
    assert_eq!(pass["runs"][0]["reasons"], json!([]));
    assert_eq!(pass["runs"][0]["trace"].as_str().unwrap().len(), 32);

    let expect = [
        ("wrong-tool", "wrong_tool"),
        ("wrong-args", "wrong_args"),
        ("no-tool-call", "no_tool_call"),
        ("extra-call", "extra_call"),
        ("forbidden-tool", "forbidden_tool"),
        ("tool-error", "tool_error"),
        ("step-limit", "step_limit"),
        ("reply-mismatch", "reply_mismatch"),
        ("agent-error", "agent_error"),
    ];
    for (id, reason) in expect {
        assert_eq!(first_reason(&doc, id)["reason"], reason, "{id}: {doc}");
    }
    let wrong_args = first_reason(&doc, "wrong-args");
    assert_eq!(wrong_args["argument"], "content");
    assert_eq!(wrong_args["got"], "\"butter\"");
    assert_eq!(first_reason(&doc, "wrong-tool")["got"], "write");
    assert_eq!(first_reason(&doc, "extra-call")["tool"], "append");
    assert_eq!(first_reason(&doc, "forbidden-tool")["tool"], "clear");
    // The agent's own words come with the status, not only "HTTP 502".
    let agent_error = first_reason(&doc, "agent-error")["message"].clone();
    let agent_error = agent_error.as_str().unwrap();
    assert!(agent_error.contains("HTTP 50"), "{agent_error}");
    assert!(
        agent_error.len() > "the agent failed: HTTP 502".len() + 10
            && agent_error.contains("model"),
        "the agent's reason is kept: {agent_error}"
    );
    // Every judged question names its recorded trace, and the trace is in the database.
    let trace = doc["questions"][6]["runs"][0]["trace"].as_str().unwrap();
    let shown = json(&system.tracer(&["show", trace, "--json"]).await);
    assert_eq!(
        shown["trace"]["title"],
        "Change caviar to salmon in my notes"
    );
    // Progress went to stderr, one line per question.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[1/10] pass: pass (1 of 1 passed)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("[2/10] wrong-tool: FAIL wrong_tool (1 of 2 passed)"),
        "{stderr}"
    );

    // The text table and the stored run.
    let listed = json(&system.tracer(&["eval", "--list", "--json"]).await);
    assert_eq!(listed[0]["run"], 1);
    assert_eq!(listed[0]["state"], "complete");
    assert_eq!(listed[0]["passed"], 1);
    assert_eq!(listed[0]["total"], 10);
    let text = stdout(&system.tracer(&["eval", "--list"]).await);
    assert!(text.contains("reasons") && text.contains("1/10"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_after_the_question_in_flight_and_keeps_a_partial_run() {
    // The first answer never comes: the agent gives up on the model after 5 s.
    let hang = Reply {
        hang: true,
        ..Reply::default()
    };
    let model = ScriptedModel::start(Dialect::Ollama, vec![hang]).await;
    let system = System::start(Setup {
        model: model.base_url.clone(),
        mcp: None,
        max_steps: 5,
    });
    let set = system.dir.path().join("set.toml");
    std::fs::write(&set, QUESTIONS).unwrap();
    let args = ["eval", set.to_str().unwrap(), "--agent", &system.agent];
    let child = tracer_asking(&system.db, &args, &model).await;
    ctrl_c(&child);
    let out = output_of(child).await;
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("0/10 passed (run 1; partial: 1 of 10 questions judged)"),
        "{text}"
    );
    let listed = json(&system.tracer(&["eval", "--list", "--json"]).await);
    assert_eq!(listed[0]["state"], "partial");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stopping after the question in flight"),
        "{stderr}"
    );
    assert!(stderr.contains("[1/10] pass: FAIL agent_error"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_face_of_the_agent_is_judged_from_the_same_wire() {
    let replies = vec![
        Reply::call("append", json!({"content": "buy milk"})),
        Reply::text("I added buy milk."),
        Reply::call("write", json!({"content": "buy milk"})),
        Reply::text("I added buy milk."),
    ];
    let model = ScriptedModel::start(Dialect::Ollama, replies).await;
    let system = System::start(Setup {
        model: model.base_url.clone(),
        mcp: None,
        max_steps: 5,
    });
    let set = system.dir.path().join("set.toml");
    let first_question = QUESTIONS
        .split("\n[[question]]\nid = \"wrong-tool\"")
        .next()
        .unwrap();
    std::fs::write(&set, first_question).unwrap();
    let out = system
        .tracer(&[
            "eval",
            set.to_str().unwrap(),
            "--agent",
            &system.agent,
            "--agent-api",
            "openai",
            "--runs",
            "2",
            "--json",
        ])
        .await;
    assert!(out.status.success(), "{out:?}");
    let doc = json(&out);
    assert_eq!(
        (doc["passed"].clone(), doc["total"].clone()),
        (json!(0), json!(1))
    );
    let runs = &doc["questions"][0]["runs"];
    assert_eq!(runs[0]["pass"], true, "{doc}");
    assert_eq!(runs[1]["reasons"][0]["reason"], "wrong_tool", "{doc}");
    assert_eq!(runs[1]["reasons"][1]["reason"], "forbidden_tool", "{doc}");
    let text = stdout(&system.tracer(&["eval", "--list"]).await);
    assert!(text.contains("0/1") && text.contains("complete"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_are_passes_over_the_whole_set_in_order() {
    // A set whose questions build on each other is asked as written in each run: add, then
    // read; add, then read. (Asked A, A, B, B the second add would get the read's answer.)
    let replies = vec![
        Reply::call("append", json!({"content": "buy milk"})),
        Reply::text("I added buy milk."),
        Reply::call("read", json!({})),
        Reply::text("Your notes say buy milk."),
        Reply::call("append", json!({"content": "buy milk"})),
        Reply::text("I added buy milk."),
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
    std::fs::write(
        &set,
        r#"
[[question]]
id = "add"
ask = "Add buy milk to my notes"
calls = [{ tool = "append", args = { content = { contains = "milk" } } }]

[[question]]
id = "read"
ask = "What is in my notes?"
calls = [{ tool = "read" }]
"#,
    )
    .unwrap();
    let out = system
        .tracer(&[
            "eval",
            set.to_str().unwrap(),
            "--agent",
            &system.agent,
            "--runs",
            "2",
            "--json",
        ])
        .await;
    assert!(out.status.success(), "{out:?}");
    let doc = json(&out);
    assert_eq!(
        (doc["passed"].clone(), doc["total"].clone()),
        (json!(2), json!(2)),
        "{doc}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let order: Vec<&str> = ["add (run 1)", "read (run 1)", "add (run 2)", "read (run 2)"]
        .into_iter()
        .filter(|label| stderr.contains(label))
        .collect();
    assert_eq!(order.len(), 4, "{stderr}");
    let at = |label: &str| stderr.find(label).unwrap();
    assert!(
        at("add (run 1)") < at("read (run 1)")
            && at("read (run 1)") < at("add (run 2)")
            && at("add (run 2)") < at("read (run 2)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_not_behind_the_proxy_stops_the_run_with_what_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let agent = super::doubles::serve(|_| json!({"reply": "Added buy milk."})).await;
    let set = dir.path().join("set.toml");
    std::fs::write(&set, QUESTIONS).unwrap();
    let out = super::system::tracer_in(
        &db,
        &[
            "eval",
            set.to_str().unwrap(),
            "--agent",
            &format!("http://{agent}"),
            "--json",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let doc = json(&out);
    assert_eq!(doc["state"], "partial");
    assert_eq!(doc["questions"].as_array().unwrap().len(), 1, "{doc}");
    let reason = first_reason(&doc, "pass");
    assert_eq!(reason["reason"], "no_trace");
    assert!(
        reason["message"].as_str().unwrap().contains("proxy"),
        "{reason}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("nothing was recorded for the first question"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_ctrl_c_abandons_the_question_in_flight() {
    use std::io::BufRead;
    let hang = Reply {
        hang: true,
        ..Reply::default()
    };
    let model = ScriptedModel::start(Dialect::Ollama, vec![hang]).await;
    let system = System::start(Setup {
        model: model.base_url.clone(),
        mcp: None,
        max_steps: 5,
    });
    let set = system.dir.path().join("set.toml");
    std::fs::write(&set, QUESTIONS).unwrap();
    let args = ["eval", set.to_str().unwrap(), "--agent", &system.agent];
    let mut child = tracer_asking(&system.db, &args, &model).await;
    ctrl_c(&child);
    let stderr = child.stderr.take().unwrap();
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines_tx.send(line);
        }
    });
    let first = lines_rx
        .iter()
        .find(|line| line.contains("again to stop now"))
        .expect("the first Ctrl-C was acknowledged");
    assert!(
        first.contains("stopping after the question in flight"),
        "{first}"
    );
    ctrl_c(&child);
    let out = output_of(child).await;
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let rest: Vec<String> = lines_rx.try_iter().collect();
    assert!(rest.iter().any(|l| l.contains("stopping now")), "{rest:?}");
    let text = stdout(&out);
    assert!(
        text.contains("0/10 passed (run 1; partial: 0 of 10 questions judged)"),
        "{text}"
    );
}
