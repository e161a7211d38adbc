//! A `tracer run` is a boundary: separate runs of a program that names no session of its own
//! land in separate traces and sessions, and each run's `--json` counts agree with its traces.

use std::path::Path;

use http::{Request, Response};
use hyper::body::Incoming;
use tracer_store::Store;

use super::https_support::{TestBody, full, plain_upstream};
use super::run_cli::{stderr_lines, tracer_run};

async fn hello(request: Request<Incoming>) -> Response<TestBody> {
    let _ = http_body_util::BodyExt::collect(request.into_body()).await;
    Response::new(full("hello from the upstream\n"))
}

/// An Anthropic-shaped answer: the same for every request, once the request has come whole.
async fn messages_reply(request: Request<Incoming>) -> Response<TestBody> {
    let _ = http_body_util::BodyExt::collect(request.into_body()).await;
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

fn curl_available() -> bool {
    std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_summary_names_each_failed_call_and_failed_tunnel_with_its_reason() {
    if !curl_available() {
        eprintln!("skipping: no curl");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = closed_port();
    // Decrypted (every host): the call reaches tracer, which answers 502.
    let url = format!("http://127.0.0.1:{port}/v1/things");
    let call = tracer_run(
        dir.path(),
        &[("NO_PROXY", ""), ("no_proxy", "")],
        &["--intercept", "*", "--", "curl", "-s", &url],
    );
    assert_eq!(
        call.status.code(),
        Some(0),
        "curl's own exit code: {call:?}"
    );
    let text = String::from_utf8_lossy(&call.stderr).into_owned();
    assert!(text.contains("1 hop (1 failed)"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("failed call: GET "))
        .unwrap_or_else(|| panic!("no failed call line: {text}"));
    assert!(line.contains("the client got 502"), "{line}");
    assert!(line.to_lowercase().contains("refused"), "{line}");
    assert!(
        text.contains("decrypting every host") && !text.contains("other hosts tunnelled"),
        "{text}"
    );

    // Tunnelled (not decrypted): the CONNECT fails.
    let https = format!("https://127.0.0.1:{port}/");
    let tunnel = tracer_run(
        dir.path(),
        &[("NO_PROXY", ""), ("no_proxy", "")],
        &[
            "--json",
            "--intercept",
            "api.openai.com",
            "--",
            "curl",
            "-s",
            &https,
        ],
    );
    assert_ne!(tunnel.status.code(), Some(0), "curl fails: {tunnel:?}");
    let lines = stderr_lines(&tunnel);
    let report: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    let failed = report["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{report:#}");
    assert_eq!(report["hops"], 0, "a CONNECT is in no trace: {report:#}");
    assert_eq!(report["connects"], 1, "{report:#}");
    assert_eq!(failed[0]["kind"], "tunnel");
    assert_eq!(failed[0]["target"], format!("127.0.0.1:{port}"));
    assert!(
        failed[0]["reason"].as_str().unwrap().contains("refused"),
        "{report:#}"
    );
    assert!(
        report["tunnelled"].as_array().unwrap().is_empty(),
        "a failed tunnel is not counted as a tunnel of 0 B: {report:#}"
    );
    let text = tracer_run(
        dir.path(),
        &[("NO_PROXY", ""), ("no_proxy", "")],
        &["--intercept", "api.openai.com", "--", "curl", "-s", &https],
    );
    let text = String::from_utf8_lossy(&text.stderr).into_owned();
    assert!(
        text.contains(&format!("failed tunnel: CONNECT 127.0.0.1:{port}: ")),
        "{text}"
    );
    assert!(!text.contains("0 B up"), "{text}");
}

/// `tracer proxy --forward` (no run): two programs sending the same request are told apart by
/// their processes; one program's two requests stay together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_forward_proxy_tells_separate_client_processes_apart() {
    if !python_available() {
        eprintln!("skipping: no python3");
        return;
    }
    let upstream = plain_upstream(messages_reply).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("forward.db");
    let ca = dir.path().join("ca");
    let proxy = super::https_support::TracerProcess::spawn(
        &db,
        &["proxy", "--forward", "127.0.0.1:0"],
        &[("TRACER_CA_DIR", ca.to_str().unwrap())],
        3,
    );
    let forward = format!("http://{}", proxy.listen_of("forward"));
    let body = r#"{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":"Add buy milk to my notes"}]}"#;
    // The same request, sent twice by one process, then once by each of two more.
    let post = format!(
        "import sys, urllib.request\n\
         for _ in range(int(sys.argv[1])):\n    \
         r = urllib.request.Request('http://{upstream}/v1/messages', data={body:?}.encode(), \
         headers={{'content-type': 'application/json', 'anthropic-version': '2023-06-01'}})\n    \
         urllib.request.urlopen(r).read()\n"
    );
    for times in ["2", "1", "1"] {
        let status = std::process::Command::new("python3")
            .args(["-c", &post, times])
            .env("HTTP_PROXY", &forward)
            .env("http_proxy", &forward)
            .env("NO_PROXY", "")
            .env("no_proxy", "")
            .status()
            .unwrap();
        assert!(status.success());
    }
    // Grouping runs every 250 ms in the proxy.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    proxy.stop();
    let store = Store::open(&db).await.unwrap();
    let runs: Vec<(Option<String>, i64)> =
        sqlx::query_as("select run_id, count(*) from hops group by run_id order by min(seq)")
            .fetch_all(store.pool())
            .await
            .unwrap();
    store.close().await;
    assert_eq!(runs.len(), 3, "three processes: {runs:?}");
    assert_eq!(runs[0].1, 2);
    assert!(
        runs.iter()
            .all(|(run, _)| run.as_deref().is_some_and(|r| r.starts_with("process:"))),
        "{runs:?}"
    );
    let (sessions, traces) = sessions_and_traces(&db).await;
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    assert_eq!(traces.len(), 3, "{traces:?}");
    assert_eq!(traces[0].2, 2, "one process's two sends: one trace");
}
