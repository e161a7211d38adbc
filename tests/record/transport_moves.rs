//! Streamable HTTP's ordinary moves are ordinary: a session of the official MCP Python SDK's
//! client (legacy era, recorded through `tracer proxy` into `tests/fixtures/
//! mcp-sdk-legacy-http.json`) opens `GET /mcp` (notes-server answers 405) and ends with
//! `DELETE /mcp`; neither is explained as an error nor makes the trace an `http error`. A `HEAD`
//! preconnect through the real proxy answered 404 is a preconnect, not a failure.

use std::path::Path;
use std::process::Command;

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body_util::Full;

fn tracer(db: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// `tracer proxy` with one route of this role to `upstream`, on a free port.
fn spawn_proxy(
    db: &Path,
    role: &str,
    upstream: std::net::SocketAddr,
) -> (u16, std::process::Child) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let proxy = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args([
            "proxy",
            "--route",
            &format!("{role}=127.0.0.1:{port}=http://{upstream}"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    (port, proxy)
}

#[test]
fn the_sdks_get_stream_declined_and_its_delete_are_not_failures() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-sdk-legacy-http.json");
    tracer(&db, &["import", fixture.to_str().unwrap()]);
    let listed: serde_json::Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    let status = listed[0]["status"].as_str().unwrap().to_string();
    // The client calls an unknown tool on purpose (a protocol error); nothing else went wrong.
    assert_eq!(status, "protocol error", "{listed}");
    let id = listed[0]["id"].as_str().unwrap().to_string();
    let show = tracer(&db, &["show", &id]);
    let line = |needle: &str| {
        show.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{show}"))
            .to_string()
    };
    assert!(
        line("GET /mcp").contains("standing stream for server messages"),
        "{show}"
    );
    assert!(
        show.contains("405  405: this server offers no stream of its own"),
        "{show}"
    );
    assert!(
        line("DELETE /mcp").contains("the host ends its MCP session"),
        "{show}"
    );
    assert!(show.contains("the session is over"), "{show}");
    assert!(
        !show.contains("-32600"),
        "the 405's body is not told as an error: {show}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_head_preconnect_answered_404_is_a_preconnect() {
    let upstream = crate::agent_doubles::serve(|_req| async {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = StatusCode::NOT_FOUND;
        response
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (port, mut proxy) = spawn_proxy(&db, "model", upstream);
    let client = crate::agent_doubles::client();
    let mut answered = None;
    for _ in 0..200 {
        let request = http::Request::head(format!("http://127.0.0.1:{port}/"))
            .body(Full::new(Bytes::new()))
            .unwrap();
        if let Ok(response) = client.request(request).await {
            answered = Some(response.status());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(answered, Some(StatusCode::NOT_FOUND));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(proxy.wait().unwrap().success());
    let listed: serde_json::Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    assert_eq!(listed[0]["status"], "ok", "{listed}");
    let show = tracer(&db, &["show", listed[0]["id"].as_str().unwrap()]);
    assert!(show.contains("HEAD /  a preconnect"), "{show}");
    assert!(show.contains("404  404: the connection is ready"), "{show}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_leaves_before_its_delete_is_answered_ended_its_session() {
    // The server is slow to answer the DELETE; the host (as Codex does when it exits) sends it
    // and goes.
    let upstream = crate::agent_doubles::serve(|_req| async {
        tokio::time::sleep(std::time::Duration::from_millis(800)).await;
        Response::new(Full::new(Bytes::new()))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (port, mut proxy) = spawn_proxy(&db, "mcp", upstream);
    let mut sent = false;
    for _ in 0..200 {
        use tokio::io::AsyncWriteExt;
        if let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            let head = "DELETE /mcp HTTP/1.1\r\nhost: x\r\nmcp-session-id: abc\r\n\r\n";
            stream.write_all(head.as_bytes()).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            drop(stream);
            sent = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(sent);
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(proxy.wait().unwrap().success());
    let hops: serde_json::Value =
        serde_json::from_str(&tracer(&db, &["ls", "--hops", "--json"])).unwrap();
    assert_eq!(
        hops[0]["state"], "aborted",
        "recorded as it happened: {hops}"
    );
    let listed: serde_json::Value = serde_json::from_str(&tracer(&db, &["ls", "--json"])).unwrap();
    assert_eq!(listed[0]["status"], "ok", "{listed}");
    let show = tracer(&db, &["show", listed[0]["id"].as_str().unwrap()]);
    assert!(
        show.contains("the host left without waiting for the answer"),
        "{show}"
    );
}
