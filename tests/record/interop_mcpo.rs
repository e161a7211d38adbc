//! Interop with real mcpo 0.0.20 (its own venv, `.venv-mcpo`, installed by scripts/test; or
//! `TRACER_MCPO_VENV`) in front of the article's phonebook on the MCP Python SDK 1.x (FastMCP over
//! Streamable HTTP), tracer in front of both: the host's REST calls are read as tool calls,
//! linked to the `tools/call` mcpo makes, the 422 as an error, lanes by route, and mcpo's
//! standing `GET /mcp` holds no trace. Skips (saying why) without the venv unless
//! `TRACER_INTEROP=1`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::process::{Child, Command};

use crate::interop_peers::venv_python;
use crate::mcpo_checks::check_mcpo_reading;
use crate::mcpo_replay::{free_port, send, start_tracer, stop_tracer};

const SERVER: &str = "tests/interop/mcpo_phonebook_server.py";

fn spawn(program: &PathBuf, args: &[String]) -> Child {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

fn traceparent(n: u32) -> Vec<(String, String)> {
    vec![
        (
            "traceparent".into(),
            format!("00-{n:032x}-00f067aa0ba902b7-01"),
        ),
        ("content-type".into(), "application/json".into()),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn real_mcpo_in_front_of_a_fastmcp_phonebook_through_tracer() {
    let venv = std::env::var("TRACER_MCPO_VENV").unwrap_or_else(|_| ".venv-mcpo".into());
    let package = "mcpo==0.0.20 'mcp<2' 'fastapi==0.128.*'";
    let Some(python) = venv_python(&venv, "mcpo", package) else {
        return;
    };
    let mcpo_bin = python.with_file_name("mcpo");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (phonebook, tracer_mcp, mcpo, tracer_mcpo) =
        (free_port(), free_port(), free_port(), free_port());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(SERVER);
    let _server = spawn(
        &python,
        &[
            script.display().to_string(),
            "--port".into(),
            phonebook.to_string(),
        ],
    );
    for _ in 0..400 {
        if TcpStream::connect(("127.0.0.1", phonebook)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let proxy = start_tracer(&db, (tracer_mcp, phonebook), (tracer_mcpo, mcpo)).await;
    let config = dir.path().join("mcpo.json");
    let servers = serde_json::json!({"mcpServers": {"phonebook": {
        "type": "streamable-http", "url": format!("http://127.0.0.1:{tracer_mcp}/mcp")}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut mcpo_child = spawn(
        &mcpo_bin,
        &[
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            mcpo.to_string(),
            "--config".into(),
            config.display().to_string(),
        ],
    );
    // mcpo is ready once it serves the phonebook's tools (asked directly, not through tracer).
    let mut ready = false;
    for _ in 0..240 {
        if TcpStream::connect(("127.0.0.1", mcpo)).await.is_ok()
            && send(mcpo, "GET", "/phonebook/openapi.json", &[], "")
                .await
                .0
                == 200
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        ready,
        "mcpo did not serve /phonebook/openapi.json within 60 s"
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (status, document) = send(
        tracer_mcpo,
        "GET",
        "/phonebook/openapi.json",
        &traceparent(1),
        "",
    )
    .await;
    assert_eq!(status, 200, "{document}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let good = r#"{"name":"Ashley Johnson"}"#;
    let (status, answer) = send(
        tracer_mcpo,
        "POST",
        "/phonebook/get_phonenumber",
        &traceparent(2),
        good,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("555-11111111"), "{answer}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let bad = r#"{"nam":"Ashley Johnson"}"#;
    let (status, answer) = send(
        tracer_mcpo,
        "POST",
        "/phonebook/get_phonenumber",
        &traceparent(3),
        bad,
    )
    .await;
    assert_eq!(status, 422, "{answer}");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // While mcpo runs (its standing stream open), and after it stopped (the stream closed).
    check_mcpo_reading(&db);
    mcpo_child.start_kill().unwrap();
    let _ = mcpo_child.wait().await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop_tracer(proxy);
    check_mcpo_reading(&db);
}
