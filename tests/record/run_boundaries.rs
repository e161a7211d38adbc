//! A `tracer run` is a boundary: separate runs of a program that names no session of its own
//! land in separate traces and sessions, and each run's `--json` counts agree with its traces.

use std::path::Path;

use http::{Request, Response};
use hyper::body::Incoming;
use tracer::store::Store;

use super::https_support::{TestBody, full, plain_upstream};
use super::run_cli::{stderr_lines, tracer_run};

async fn hello(_request: Request<Incoming>) -> Response<TestBody> {
    Response::new(full("hello from the upstream\n"))
}

/// An Anthropic-shaped answer: the same for every request.
async fn messages_reply(_request: Request<Incoming>) -> Response<TestBody> {
    let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Noted."}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":3}}"#;
    let mut response = Response::new(full(body));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    response
}

fn python_available() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One `tracer run --json --intercept '*'` of `command`; returns its report.
async fn run_once(dir: &Path, command: Vec<String>) -> serde_json::Value {
    let dir = dir.to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        let mut args = vec!["--json", "--intercept", "*", "--"];
        args.extend(command.iter().map(String::as_str));
        tracer_run(&dir, &[("NO_PROXY", ""), ("no_proxy", "")], &args)
    })
    .await
    .unwrap();
    assert!(output.status.success(), "{output:?}");
    let lines = stderr_lines(&output);
    serde_json::from_str(lines.last().unwrap()).unwrap()
}

/// Every session id and every (trace id, session id, hop count) in the database.
async fn sessions_and_traces(db: &Path) -> (Vec<String>, Vec<(String, Option<String>, i64)>) {
    let store = Store::open(db).await.unwrap();
    let sessions = store
        .sessions()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    let pool = store.pool().clone();
    let traces: Vec<(String, Option<String>, i64)> = sqlx::query_as(
        "select t.id, t.session_id, (select count(*) from hops h where h.trace_id = t.id)
         from traces t order by t.started_unix_ns",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let runs: Vec<(Option<String>,)> = sqlx::query_as("select distinct run_id from hops")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(
        runs.iter().all(|(run,)| run.is_some()),
        "every hop has its run"
    );
    store.close().await;
    (sessions, traces)
}

/// The report's hop count equals the hop count of its one trace.
fn counts_agree(report: &serde_json::Value) {
    let traces = report["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 1, "one trace per run: {report:#}");
    assert_eq!(report["hops"], traces[0]["hop_count"], "{report:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_runs_of_one_program_are_three_traces_in_three_sessions() {
    if !python_available() {
        eprintln!("skipping: no python3");
        return;
    }
    let upstream = plain_upstream(hello).await;
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "import urllib.request; print(urllib.request.urlopen('http://{upstream}/').read().decode())"
    );
    let mut run_ids = Vec::new();
    for _ in 0..3 {
        let report = run_once(
            dir.path(),
            vec!["python3".into(), "-c".into(), script.clone()],
        )
        .await;
        counts_agree(&report);
        assert_eq!(report["hops"], 1, "{report:#}");
        run_ids.push(report["run_id"].as_str().unwrap().to_string());
    }
    run_ids.dedup();
    assert_eq!(run_ids.len(), 3, "each run its own id");
    let (sessions, traces) = sessions_and_traces(&dir.path().join("run.db")).await;
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    assert_eq!(traces.len(), 3, "{traces:?}");
    for (_, session, hops) in &traces {
        assert_eq!(*hops, 1);
        assert!(session.is_some());
    }
    let mut distinct: Vec<_> = traces.iter().map(|t| t.1.clone()).collect();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "no two traces share a session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_programs_and_two_identical_agent_runs_stay_apart() {
    if !python_available() {
        eprintln!("skipping: no python3");
        return;
    }
    let upstream = plain_upstream(messages_reply).await;
    let dir = tempfile::tempdir().unwrap();
    let body = r#"{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":"Add buy milk to my notes"}]}"#;
    let post = format!(
        "import urllib.request; r = urllib.request.Request('http://{upstream}/v1/messages', \
         data={body:?}.encode(), headers={{'content-type': 'application/json', \
         'anthropic-version': '2023-06-01'}}); print(urllib.request.urlopen(r).read().decode())"
    );
    // The same Anthropic-shaped request twice: the same user words, no session header.
    for _ in 0..2 {
        let report = run_once(
            dir.path(),
            vec!["python3".into(), "-c".into(), post.clone()],
        )
        .await;
        counts_agree(&report);
        assert_eq!(report["hops"], 1, "{report:#}");
        assert_eq!(report["traces"][0]["title"], "Add buy milk to my notes");
    }
    // Then another program entirely.
    let get = format!("import urllib.request; urllib.request.urlopen('http://{upstream}/').read()");
    let report = run_once(dir.path(), vec!["python3".into(), "-c".into(), get]).await;
    counts_agree(&report);
    let (sessions, traces) = sessions_and_traces(&dir.path().join("run.db")).await;
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    assert_eq!(traces.len(), 3, "{traces:?}");
    assert!(traces.iter().all(|(_, _, hops)| *hops == 1), "{traces:?}");
}
