//! The forward proxy with the official OpenAI and MCP Python SDKs as the agent: HTTPS_PROXY set,
//! the bundle from `tracer ca --env` trusted, a scripted OpenAI-compatible TLS server and
//! notes-server behind TLS. Every exchange is recorded decrypted, the buy-milk walk is grouped
//! into one trace with no instrumentation, and `tracer show` explains it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tracer_reference::notes_server::{NotesServer, NotesServerConfig, serve_http};
use tracer_wire::hop::Role;

use super::https_support::{HOST, TestPki, TracerProcess, hops_in, tls_front, tls_upstream};

const NOTES: &str = "notes.example.test";

/// The `export NAME='VALUE'` lines of `tracer ca --env`, as pairs.
fn trust_env(ca_dir: &Path) -> Vec<(String, String)> {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["ca", "--env", "--ca-dir"])
        .arg(ca_dir)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_prefix("export "))
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, value)| (name.to_string(), value.trim_matches('\'').to_string()))
        .collect()
}

fn tracer_show(db: &Path, trace: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(["show", trace])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_and_mcp_sdks_through_https_proxy_are_recorded_decrypted_and_grouped() {
    let Some(python) = crate::interop_peers::venv_python(".venv", "openai", "openai==3.57.0")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(&[HOST, NOTES]);
    let test_ca = pki.write_ca(dir.path(), "upstream-ca.pem");
    let model = tls_upstream(&pki, &["h2", "http/1.1"], super::openai_double::answer).await;
    let notes_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let notes_plain = notes_listener.local_addr().unwrap();
    let notes = NotesServer::open(NotesServerConfig::new(dir.path().join("notes")))
        .await
        .unwrap();
    tokio::spawn(serve_http(notes_listener, notes, std::future::pending()));
    let notes_tls = tls_front(&pki, notes_plain).await;

    let ca_dir = dir.path().join("ca");
    let db = dir.path().join("tracer.db");
    let args = [
        "proxy".to_string(),
        "--forward".into(),
        "127.0.0.1:0".into(),
        "--ca-dir".into(),
        ca_dir.display().to_string(),
        "--upstream-ca".into(),
        test_ca.display().to_string(),
        "--resolve".into(),
        format!("{HOST}:443={}", model.addr),
        "--resolve".into(),
        format!("{NOTES}:443={notes_tls}"),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let proxy = TracerProcess::spawn(&db, &args, &[], 3);
    let forward = format!("http://{}", proxy.listen_of("forward"));

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/https_agent.py");
    let mut command = tokio::process::Command::new(&python);
    command
        .arg(&script)
        .arg(format!("https://{HOST}/v1"))
        .arg(format!("https://{NOTES}/mcp"))
        .env("HTTPS_PROXY", &forward)
        .env("HTTP_PROXY", &forward)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("OPENAI_BASE_URL");
    let trust = trust_env(&ca_dir);
    // `tracer ca --env` prints the trust of every common runtime; Python's are among them.
    let names: Vec<&str> = trust.iter().map(|(name, _)| name.as_str()).collect();
    for name in ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    for (name, value) in &trust {
        command.env(name, value);
    }
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), command.output())
        .await
        .expect("the SDK agent finished")
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["tools"][2], "append");
    assert_eq!(summary["chat"]["tool"], "append");
    assert_eq!(summary["chat"]["arguments"]["content"], "buy milk");
    assert_eq!(
        summary["chat"]["reply"],
        "I added \"buy milk\" to your notes."
    );
    assert_eq!(summary["responses"]["tool"], "read");
    assert_eq!(summary["responses"]["notes"], "buy milk\n");
    assert_eq!(summary["responses"]["reply"], "Your notes say: buy milk\n");
    assert_eq!(summary["responses"]["streamed"], "Hello there");
    assert_eq!(summary["responses"]["status"], "completed");
    assert_eq!(summary["chat_stream"], "hello!");
    proxy.stop();

    let hops = hops_in(&db).await;
    let text = |h: &tracer_store::hops::StoredHop| {
        String::from_utf8_lossy(&h.end.request_body.bytes).to_string()
    };
    for hop in &hops {
        assert_ne!(
            hop.start.method, "CONNECT",
            "nothing tunnelled: {:?}",
            hop.end.error
        );
        let expected = if hop.start.route == HOST {
            Role::Model
        } else {
            Role::Mcp
        };
        assert_eq!(
            hop.start.role, expected,
            "{} {}",
            hop.start.route, hop.start.path
        );
    }
    let first_chat = hops
        .iter()
        .find(|h| h.start.path == "/v1/chat/completions" && text(h).contains("Add buy milk"))
        .unwrap();
    assert!(
        String::from_utf8_lossy(&first_chat.end.response_body.bytes).contains("\"append\""),
        "decrypted response"
    );
    let append = hops
        .iter()
        .find(|h| text(h).contains("\"tools/call\"") && text(h).contains("buy milk"))
        .unwrap();
    let trace = first_chat.trace_id.clone().expect("grouped");
    assert_eq!(
        append.trace_id.as_ref(),
        Some(&trace),
        "the tool call joins the walk"
    );
    let answer = hops
        .iter()
        .rfind(|h| h.start.path == "/v1/chat/completions" && text(h).contains("\"tool\""))
        .unwrap();
    assert_eq!(answer.trace_id.as_ref(), Some(&trace));
    let responses: Vec<_> = hops
        .iter()
        .filter(|h| h.start.path == "/v1/responses")
        .collect();
    assert_eq!(responses.len(), 3);

    let shown = tracer_show(&db, &trace);
    assert!(shown.contains("\"Add buy milk to my notes\""), "{shown}");
    assert!(
        shown.contains("the model asks for tool append {\"content\":\"buy milk\"}"),
        "{shown}"
    );
    assert!(shown.contains("tools/call append"), "{shown}");
    assert!(
        shown.contains("the model answers: \"I added \"buy milk\" to your notes.\""),
        "{shown}"
    );
}
