//! `tracer rerun`: the agent request sent again through the live proxy route (a new trace and
//! the diff), `--times` tallies, and `--step` with `--tools-from` seeing an edited description.

use serde_json::{Value, json};

use super::doubles::{careless_mcp, description_reading_model};
use super::system::{
    Setup, System, ctrl_c, free_port, json, output_of, stdout, tracer_asking, tracer_in,
};
use crate::scripted_model::{Dialect, Reply, ScriptedModel};

fn answer(tool: &str, content: &str) -> Vec<Reply> {
    vec![
        Reply::call(tool, json!({ "content": content })),
        Reply::text("Done."),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rerun_is_recorded_as_a_new_trace_and_diffed_against_the_original() {
    let replies = [
        answer("append", "buy milk"),
        answer("write", "buy milk"),
        answer("append", "buy milk"),
        answer("append", "buy milk"),
        answer("write", "buy milk"),
    ]
    .concat();
    let model = ScriptedModel::start(Dialect::Ollama, replies).await;
    let system = System::start(Setup {
        model: model.base_url.clone(),
        mcp: None,
        max_steps: 5,
    });
    let original = system.ask("Add buy milk to my notes").await;

    // No --to: the proxy announced its agent route in the database.
    let out = system.tracer(&["rerun", &original[..10]]).await;
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("re-ran trace {original} as trace ")),
        "{text}"
    );
    let new = first.split_whitespace().nth(5).unwrap().to_string();
    assert_ne!(new, original);
    // It says that the tools run again, for real, naming those the original called.
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(
        warned.contains("the agent runs its tools again, for real (the original called append)"),
        "{warned}"
    );
    assert!(
        text.contains("different tools (A: append; B: write)"),
        "{text}"
    );
    let listed = json(&system.tracer(&["ls", "--json"]).await);
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert!(
        ids.contains(&new.as_str()) && ids.contains(&original.as_str()),
        "{listed}"
    );
    let recorded = json(&system.tracer(&["show", &new, "--json"]).await);
    assert_eq!(recorded["trace"]["title"], "Add buy milk to my notes");

    // Three more runs, tallied.
    let out = system
        .tracer(&["rerun", &original, "--times", "3", "--to", &system.agent])
        .await;
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "2 of 3 re-runs made the same tool calls as trace {original}"
        )),
        "{text}"
    );
    assert!(
        text.contains(r#"append {"content":"buy milk"}  2 of 3"#),
        "{text}"
    );
    assert!(
        text.contains(r#"write {"content":"buy milk"}   1 of 3"#),
        "{text}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[3/3] run 3: trace "), "{stderr}");
    assert_eq!(model.replies_left(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn rerun_without_a_live_route_or_an_agent_hop_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let samples = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-traces");
    let buy_milk = format!("{samples}/buy-milk.json");
    let out = tracer_in(&db, &["import", &buy_milk]).await;
    assert!(out.status.success(), "{out:?}");
    let id = json(&tracer_in(&db, &["ls", "--json"]).await)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Imported: no proxy serves the route that recorded it.
    let out = tracer_in(&db, &["rerun", &id]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no tracer proxy is serving route agent now")
            && stderr.contains("--to URL"),
        "{stderr}"
    );
    // --to somewhere nothing listens: the error names it.
    let closed = format!("http://127.0.0.1:{}", free_port());
    let out = tracer_in(&db, &["rerun", &id, "--to", &closed]).await;
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&closed),
        "{out:?}"
    );
    // A trace recorded without an agent route can only be re-sent a step at a time.
    let phonebook = format!("{samples}/phonebook-text-tool-call.json");
    let out = tracer_in(&db, &["rerun", &phonebook]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("has no agent hop") && stderr.contains("--step K"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_step_rerun_with_tools_from_sees_the_edited_description() {
    let model = description_reading_model().await;
    let careless = careless_mcp().await;
    let system = System::start(Setup {
        model,
        mcp: Some(careless),
        max_steps: 5,
    });
    // Recorded with the careless descriptions: the model picked `write`.
    let original = system.ask("Add buy milk to my notes").await;
    let diff = json(
        &system
            .tracer(&["diff", &original, &original, "--json"])
            .await,
    );
    assert_eq!(diff["tool_calls_a"][0]["name"], "write");

    let hops_of = |hops: &Value, trace: &str| {
        hops.as_array()
            .unwrap()
            .iter()
            .filter(|h| h["trace_id"].as_str().is_some_and(|t| t.starts_with(trace)))
            .count()
    };
    let listed = json(
        &system
            .tracer(&["ls", "--hops", "--json", "-n", "500"])
            .await,
    );
    let hops_before = listed.as_array().unwrap().len();
    let original_hops = hops_of(&listed, &original);
    assert!(original_hops >= 3, "{listed}");
    // The same request, unchanged: the model still picks write.
    let out = system
        .tracer(&[
            "rerun",
            &original,
            "--step",
            "1",
            "--model-url",
            &system.model_route,
            "--times",
            "2",
        ])
        .await;
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains(r#"recorded: write {"content":"buy milk"}"#),
        "{text}"
    );
    assert!(
        text.contains(r#"write {"content":"buy milk"}  2 of 2"#),
        "{text}"
    );

    // With the tool list fetched fresh from notes-server, whose append says "Add ...".
    let out = system
        .tracer(&[
            "rerun",
            &original,
            "--step",
            "1",
            "--model-url",
            &system.model_route,
            "--tools-from",
            &system.notes_server,
            "--model",
            "other-model",
            "--json",
        ])
        .await;
    assert!(out.status.success(), "{out:?}");
    let doc = json(&out);
    assert_eq!(
        doc["tools"],
        json!(["read", "write", "append", "update", "clear"])
    );
    assert_eq!(doc["model"], "other-model");
    assert_eq!(doc["tool_calls_recorded"][0]["name"], "write");
    assert_eq!(
        doc["tally"],
        json!([{"name": "append", "arguments": {"content": "buy milk"}, "runs": 1}])
    );

    // Sent through the proxy's model route, the three requests were recorded too.
    let deadline = std::time::Instant::now() + super::system::LIMIT;
    loop {
        let hops = json(
            &system
                .tracer(&["ls", "--hops", "--json", "-n", "500"])
                .await,
        );
        let count = hops.as_array().unwrap().len();
        let grouped = hops
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["trace_id"].is_string());
        if count == hops_before + 3 && grouped {
            // Each re-sent request is a trace of its own, none joined the original.
            assert_eq!(hops_of(&hops, &original), original_hops, "{hops}");
            let new_traces: std::collections::HashSet<&str> = hops.as_array().unwrap()[..3]
                .iter()
                .map(|h| h["trace_id"].as_str().unwrap())
                .collect();
            assert_eq!(new_traces.len(), 3, "{hops}");
            break;
        }
        assert!(count < hops_before + 3, "{count} hops: {hops}");
        assert!(
            std::time::Instant::now() < deadline,
            "{count} hops, not {}",
            hops_before + 3
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    let out = system
        .tracer(&[
            "rerun",
            &original,
            "--step",
            "7",
            "--model-url",
            &system.model_route,
        ])
        .await;
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--step counts from 1"),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proxy_announces_its_routes_while_it_serves_and_retires_them_when_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let port = free_port();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .args(["proxy", "--route"])
        .arg(format!("agent:front=127.0.0.1:{port}=http://127.0.0.1:9"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let child = super::system::Running(child);
    // The proxy opens (and creates) the database before it listens: wait for that, so two
    // processes never create one database at once.
    let deadline = std::time::Instant::now() + super::system::LIMIT;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the proxy never listened"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let store = tracer_store::Store::open(&db).await.unwrap();
    let served = loop {
        let served = store.served_routes_named("front").await.unwrap();
        if !served.is_empty() {
            break served;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the route was never announced"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(served[0].role, "agent");
    assert_eq!(served[0].listen, format!("127.0.0.1:{port}"));
    assert_eq!(served[0].pid, i64::from(child.0.id()));
    // A request answered (502: nothing upstream) shows the proxy runs, its stop signals heard.
    let answer = tracer::compare::send::post_json(
        &format!("http://127.0.0.1:{port}/agent"),
        b"{}".to_vec(),
        None,
        super::system::LIMIT,
    )
    .await
    .unwrap();
    assert_eq!(answer.status, 502);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.0.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let mut child = child;
    let status = tokio::task::spawn_blocking(move || child.0.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success());
    assert!(store.served_routes_named("front").await.unwrap().is_empty());
    store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_rerun_times_after_the_run_in_flight_and_says_so() {
    let model = ScriptedModel::start(Dialect::Ollama, answer("append", "buy milk")).await;
    let system = System::start(Setup {
        model: model.base_url.clone(),
        mcp: None,
        max_steps: 5,
    });
    let original = system.ask("Add buy milk to my notes").await;
    // The model of the re-runs never answers: the run in flight ends by its timeout.
    let hang = Reply {
        hang: true,
        ..Reply::default()
    };
    let silent = ScriptedModel::start(Dialect::Ollama, vec![hang]).await;
    let args = [
        "rerun",
        &original,
        "--step",
        "1",
        "--model-url",
        &silent.base_url,
        "--times",
        "3",
        "--timeout",
        "2",
        "--json",
    ];
    let child = tracer_asking(&system.db, &args, &silent).await;
    ctrl_c(&child);
    let out = output_of(child).await;
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let doc = json(&out);
    assert_eq!(doc["state"], "partial", "{doc}");
    assert_eq!(doc["times"], 3, "{doc}");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(silent.received().len(), 1, "no run started after Ctrl-C");
}
