//! `tracer run -- COMMAND`: the child's exit code (128+N after signal N), the proxy and trust
//! variables it gets, the first line and the end (`--quiet`, `--json`); and curl and Python
//! `requests` under `tracer run` against a TLS upstream under its real host name, decrypted with
//! no other setup. Each agent's override: `run_overrides.rs`.

use std::path::Path;
use std::process::{Command, Output};

use http::{Request, Response};
use hyper::body::Incoming;

use super::https_support::{TestBody, TestPki, full, hops_in, tls_upstream};

/// `tracer run` in `dir` with a CA there, the given environment and arguments.
pub fn tracer_run(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
    command
        .current_dir(dir)
        .env("TRACER_CA_DIR", dir.join("ca"))
        .env_remove("TRACER_DB")
        .arg("run")
        .arg("--db")
        .arg(dir.join("run.db"))
        .args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

pub fn stderr_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn the_childs_exit_code_is_tracers_and_a_signal_is_128_plus_n() {
    let dir = tempfile::tempdir().unwrap();
    let three = tracer_run(dir.path(), &[], &["--", "sh", "-c", "exit 3"]);
    assert_eq!(three.status.code(), Some(3), "{three:?}");
    let killed = tracer_run(dir.path(), &[], &["--", "sh", "-c", "kill -KILL $$"]);
    assert_eq!(killed.status.code(), Some(128 + 9), "{killed:?}");
    let missing = tracer_run(dir.path(), &[], &["--", "/nonexistent/agent"]);
    assert_eq!(missing.status.code(), Some(127), "{missing:?}");
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot start `/nonexistent/agent`"));
}

#[test]
fn the_child_gets_the_proxy_and_trust_for_every_runtime_and_keeps_no_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let output = tracer_run(
        dir.path(),
        &[("NO_PROXY", "keep.example.test"), ("SSL_CERT_FILE", "")],
        &["--quiet", "--", "env"],
    );
    assert!(output.status.success(), "{output:?}");
    let env: std::collections::HashMap<String, String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| {
            l.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    let proxy = env["HTTPS_PROXY"].clone();
    assert!(proxy.starts_with("http://127.0.0.1:"), "{proxy}");
    for name in [
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        assert_eq!(env[name], proxy, "{name}");
    }
    let bundle = dir.path().join("ca/tracer-ca-bundle.pem");
    for name in [
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "CODEX_CA_CERTIFICATE",
        "GIT_SSL_CAINFO",
        "CARGO_HTTP_CAINFO",
        "AWS_CA_BUNDLE",
        "DENO_CERT",
    ] {
        assert_eq!(Path::new(&env[name]), bundle, "{name}");
    }
    let ca = std::fs::read_to_string(dir.path().join("ca/tracer-ca.pem")).unwrap();
    assert_eq!(Path::new(&env["NODE_EXTRA_CA_CERTS"]), bundle);
    let bundled = std::fs::read_to_string(&bundle).unwrap();
    assert!(
        bundled.contains(ca.lines().nth(1).unwrap()),
        "the bundle holds tracer's CA"
    );
    assert!(
        bundled.matches("BEGIN CERTIFICATE").count() > 1,
        "and the system's roots"
    );
    assert_eq!(env["NODE_USE_ENV_PROXY"], "1");
    assert_eq!(env["NO_PROXY"], "keep.example.test");
    assert_eq!(Path::new(&env["TRACER_DB"]), dir.path().join("run.db"));

    // `tracer ca --env` prints the same trust set (and the proxy with --proxy).
    let ca_env = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["ca", "--env", "--proxy", "127.0.0.1:9"])
        .env("TRACER_CA_DIR", dir.path().join("ca"))
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&ca_env.stdout).into_owned();
    for name in [
        "SSL_CERT_FILE",
        "CODEX_CA_CERTIFICATE",
        "DENO_CERT",
        "NODE_EXTRA_CA_CERTS",
    ] {
        assert!(
            lines.contains(&format!("export {name}='{}'", env[name])),
            "{name}: {lines}"
        );
    }
    assert!(lines.contains("export NODE_USE_ENV_PROXY='1'"), "{lines}");
    assert!(
        lines.contains("export HTTPS_PROXY='http://127.0.0.1:9'"),
        "{lines}"
    );
}

#[test]
fn one_line_before_and_quiet_or_json_after() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = tracer_run(dir.path(), &[], &["--quiet", "--", "true"]);
    let lines = stderr_lines(&quiet);
    let run_lines: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("tracer run:"))
        .collect();
    assert_eq!(run_lines.len(), 1, "{lines:#?}");
    let first = run_lines[0];
    assert!(first.contains(&format!(
        "recording to {}",
        dir.path().join("run.db").display()
    )));
    assert!(first.contains("tracer tui --db"), "{first}");
    assert!(
        first.contains("stdio MCP servers NOT recorded (tracer does not know `true`"),
        "{first}"
    );
    assert!(
        first.contains("api.anthropic.com, api.openai.com"),
        "{first}"
    );
    assert!(first.contains("other hosts tunnelled"), "{first}");

    let json = tracer_run(
        dir.path(),
        &[("MY_MODEL_BASE_URL", "https://llm.corp.test/v1")],
        &["--json", "--", "sh", "-c", "exit 5"],
    );
    assert_eq!(json.status.code(), Some(5));
    let lines = stderr_lines(&json);
    assert!(
        lines[lines.len() - 2].contains("decrypting llm.corp.test, the 24 known"),
        "{lines:#?}"
    );
    let value: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(value["exit_code"], 5);
    assert_eq!(value["command"], "sh");
    assert!(value["traces"].as_array().unwrap().is_empty());

    let every = tracer_run(
        dir.path(),
        &[],
        &["--quiet", "--intercept", "*", "--", "true"],
    );
    assert!(String::from_utf8_lossy(&every.stderr).contains("decrypting every host"));
}

/// Reads the request whole, as the real API does, then answers (an upstream that answers before
/// the body has come stops hyper sending the rest of it, and the record then has none).
async fn chat_reply(request: Request<Incoming>) -> Response<TestBody> {
    let _ = http_body_util::BodyExt::collect(request.into_body()).await;
    let mut response = Response::new(full(
        r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"noted"},"finish_reason":"stop"}]}"#,
    ));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    response
}

fn available(program: &str, probe: &[&str]) -> bool {
    let found = Command::new(program)
        .args(probe)
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("TRACER_INTEROP").as_deref() != Ok("1"),
            "TRACER_INTEROP=1 but {program} {probe:?} fails"
        );
        eprintln!("skipping: {program} {probe:?} fails here");
    }
    found
}

/// curl and Python `requests` under `tracer run`, nothing else set up: decrypted and recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_and_python_requests_are_recorded_decrypted_with_no_setup() {
    let host = "api.openai.com";
    let pki = TestPki::new(&[host]);
    let upstream = tls_upstream(&pki, &["http/1.1"], chat_reply).await;
    let dir = tempfile::tempdir().unwrap();
    let test_ca = pki.write_ca(dir.path(), "upstream-ca.pem");
    let resolve = format!("{host}:443={}", upstream.addr);
    let shared = [
        "--no-redact",
        "--upstream-ca",
        test_ca.to_str().unwrap(),
        "--resolve",
        &resolve,
        "--json",
        "--",
    ];
    let body =
        r#"{"model":"gpt-test","messages":[{"role":"user","content":"Add buy milk to my notes"}]}"#;
    let mut clients: Vec<Vec<String>> = Vec::new();
    if available("curl", &["--version"]) {
        clients.push(
            [
                "curl",
                "-sS",
                "-H",
                "content-type: application/json",
                "-d",
                body,
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("https://{host}/v1/chat/completions")])
            .collect(),
        );
    }
    if available("python3", &["-c", "import requests"]) {
        let script = format!(
            "import requests; r = requests.post('https://{host}/v1/chat/completions', data='{body}', \
             headers={{'content-type': 'application/json'}}); print(r.status_code, r.text)"
        );
        clients.push(vec!["python3".into(), "-c".into(), script]);
    }
    let dir_path = dir.path().to_path_buf();
    let count = clients.len();
    for client in clients {
        let mut args: Vec<&str> = shared.to_vec();
        args.extend(client.iter().map(String::as_str));
        let output = {
            let dir_path = dir_path.clone();
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                tracer_run(&dir_path, &[], &args)
            })
            .await
            .unwrap()
        };
        assert!(output.status.success(), "{}: {output:?}", client[0]);
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("noted"),
            "{output:?}"
        );
        let lines = stderr_lines(&output);
        let report: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
        assert_eq!(report["traces"].as_array().unwrap().len(), 1, "{report:#}");
        assert_eq!(
            report["traces"][0]["title"], "Add buy milk to my notes",
            "{report:#}"
        );
    }
    let hops = hops_in(&dir.path().join("run.db")).await;
    assert_eq!(hops.len(), count, "one decrypted hop per client");
    for hop in &hops {
        assert_eq!(hop.start.route, host);
        assert_eq!(hop.start.path, "/v1/chat/completions");
        assert_eq!(hop.end.status, Some(200));
        assert!(String::from_utf8_lossy(&hop.end.response_body.bytes).contains("noted"));
    }
}
