//! Interop: the official MCP Python SDK client, unmodified, through tracer: over HTTP behind
//! `tracer proxy`, and over stdio behind `tracer wrap`. It must get the same answers as without
//! tracer, and tracer must record every exchange.
//! Skips (saying why) when `.venv/bin/python` is missing, unless `TRACER_INTEROP=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::interop_peers;

use std::path::Path;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::process::Command;
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_reference::notes_server::{NotesServer, NotesServerConfig, serve_http};
use tracer_store::{Recorder, Store};
use tracer_wire::hop::{HopState, Role, Transport};

use interop_peers::venv_python;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/interop/mcp_sdk_client.py"
);

async fn run_client(python: &Path, args: &[&str]) -> String {
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        Command::new(python)
            .arg(SCRIPT)
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the SDK client took over 120 s")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "SDK client {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stdout
}

fn methods_of(hops: &[tracer_store::hops::StoredHop]) -> Vec<String> {
    hops.iter()
        .filter_map(|hop| {
            let body: serde_json::Value =
                serde_json::from_slice(&hop.end.request_body.bytes).ok()?;
            body["method"].as_str().map(str::to_string)
        })
        .collect()
}

#[tokio::test]
async fn the_mcp_sdk_works_unchanged_through_the_proxy_and_every_exchange_is_recorded() {
    let Some(python) = venv_python(".venv", "mcp", "mcp==2.3.0") else {
        return;
    };
    for sse in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = NotesServerConfig::new(dir.path().join("db"));
        config.sse = sse;
        let server = NotesServer::open(config).await.unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let upstream = listener.local_addr().unwrap();
        tokio::spawn(serve_http(listener, server, std::future::pending()));

        let store = Store::open(&dir.path().join("tracer.db")).await.unwrap();
        let route =
            Route::new("mcp", "notes", "127.0.0.1:0", &format!("http://{upstream}")).unwrap();
        let proxy = Proxy::bind(vec![route], ProxySettings::default())
            .await
            .unwrap();
        let url = format!("http://{}/mcp", proxy.routes()[0].listen);
        let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(proxy.run(recorder, async move {
            let _ = stopped.await;
        }));
        for mode in ["auto", "legacy"] {
            let said = run_client(&python, &["--url", &url, "--mode", mode]).await;
            assert!(said.starts_with("ok: mcp "), "{said}");
        }
        stop.send(()).unwrap();
        running.await.unwrap();
        let report = writer.await.unwrap();
        assert_eq!(report.hops_not_written, 0);
        let hops = store.all_hops().await.unwrap();
        assert!(
            hops.iter()
                .all(|h| h.state == HopState::Complete && h.start.role == Role::Mcp)
        );
        let methods = methods_of(&hops);
        for expected in ["server/discover", "initialize", "tools/list", "tools/call"] {
            assert!(
                methods.iter().any(|m| m == expected),
                "sse={sse}: no {expected} in {methods:?}"
            );
        }
        let calls = methods.iter().filter(|m| *m == "tools/call").count();
        assert!(calls >= 2 * 11, "sse={sse}: {calls} tools/call recorded");
        if sse {
            let streamed = hops.iter().any(|h| {
                tracer_wire::hop::header_text(&h.end.response_headers, "content-type")
                    .is_some_and(|ct| ct.starts_with("text/event-stream"))
            });
            assert!(streamed, "SSE answers went through the proxy");
        }
    }
}

#[tokio::test]
async fn the_mcp_sdk_stdio_client_gets_the_same_answers_through_tracer_wrap() {
    let Some(python) = venv_python(".venv", "mcp", "mcp==2.3.0") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes/db");
    let db = dir.path().join("tracer.db");
    let notes_server = env!("CARGO_BIN_EXE_notes-server");
    let tracer = env!("CARGO_BIN_EXE_tracer");
    for mode in ["auto", "legacy"] {
        let args = [
            "--stdio",
            notes_server,
            "--file",
            notes.to_str().unwrap(),
            "--mode",
            mode,
        ];
        let plain = run_client(&python, &args).await;
        let mut wrapped_args = args.to_vec();
        wrapped_args.extend(["--wrap", tracer, "--db", db.to_str().unwrap()]);
        let wrapped = run_client(&python, &wrapped_args).await;
        assert_eq!(
            wrapped, plain,
            "the SDK saw the same answers through tracer wrap"
        );
    }
    let store = Store::open(&db).await.unwrap();
    let hops = store.all_hops().await.unwrap();
    assert!(
        hops.iter()
            .all(|h| h.start.transport == Transport::Stdio && h.start.route == "notes")
    );
    let methods: Vec<&str> = hops.iter().map(|h| h.start.method.as_str()).collect();
    for expected in [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
    ] {
        assert!(methods.contains(&expected), "no {expected} in {methods:?}");
    }
    let answered = hops
        .iter()
        .filter(|h| h.start.method == "tools/call" && !h.end.response_body.bytes.is_empty());
    assert!(
        answered.count() >= 2 * 11,
        "every tools/call has its answer recorded"
    );
}
