//! Secrets through the real proxy: headers, query parameters, URL credentials, JSON and form
//! bodies reach the upstream and the client byte for byte, while the database and every export
//! hold the redaction marker instead; `--no-redact` keeps everything; correlation ids stay.
//!
//! Every secret in these tests contains `SECRET` (upper case) and nothing else does, so one
//! search of a stored row or an exported file finds any that leaked.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt;
use tracer_record::proxy::{ProxySettings, Route};
use tracer_store::Store;
use tracer_wire::hop::Role;

use super::proxy::harness::{Harness, client, full, header, settled_hops, spawn_upstream};

/// What the upstream received: path and query, headers, body.
#[derive(Clone, Debug)]
struct Seen {
    target: String,
    headers: http::HeaderMap,
    body: Bytes,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// An upstream that logs each request and answers `content_type` + `answer`, with a
/// `Location` that carries an OAuth code.
async fn logging_upstream(
    content_type: &'static str,
    answer: &'static str,
) -> (std::net::SocketAddr, Log) {
    let log: Log = Arc::default();
    let kept = log.clone();
    let addr = spawn_upstream(move |request: Request<hyper::body::Incoming>| {
        let kept = kept.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = body.collect().await.unwrap().to_bytes();
            kept.lock().unwrap().push(Seen {
                target: parts.uri.to_string(),
                headers: parts.headers,
                body,
            });
            Response::builder()
                .header("content-type", content_type)
                .header(
                    "location",
                    "https://app.example/cb?code=SECRET-loc-code&state=st1",
                )
                .header("x-hub-signature-256", "sha256=SECRET-hub")
                .header("x-request-id", "req-42")
                .body(full(answer))
                .unwrap()
        }
    })
    .await;
    (addr, log)
}

const HEADERS: [(&str, &str); 13] = [
    ("authorization", "Bearer SECRET-auth"),
    ("x-password", "SECRET-xpw"),
    ("x-signature-ed25519", "SECRET-sig"),
    ("x-hub-signature-256", "sha256=SECRET-hub-req"),
    ("x-csrf-token", "SECRET-csrf"),
    ("mcp-session-id", "SECRET-mcp-session"),
    ("cookie", "sid=SECRET-cookie"),
    ("api-key", "SECRET-azure"),
    ("x-claude-code-session-id", "corr-claude"),
    ("session-id", "corr-session"),
    ("thread-id", "corr-thread"),
    ("x-request-id", "corr-xreq"),
    ("request-id", "corr-req"),
];

const QUERY: &str = "/v1/chat?code=SECRET-q1&client_secret=SECRET-q2&Password=SECRET-q3\
&refresh_token=SECRET-q4&id_token=SECRET-q5&X-Amz-Signature=SECRET-q6&X-Amz-Credential=SECRET-q7\
&X-Amz-Security-Token=SECRET-q8&api-key=SECRET-q9&subscription-key=SECRET-q10\
&api%5Fkey=SECRET-q11&%6Bey=SECRET-q12&model=kept";

const JSON_BODY: &str = r#"{"model":"m","api_key":"SECRET-j1","messages":[{"role":"user","content":"hi"}],
"auth":{"apiKey":"SECRET-j2","nested":[{"password":"SECRET-j3","client_secret":"SECRET-j4"}]},
"access_token":"SECRET-j5","refresh_token":"SECRET-j6","id_token":"SECRET-j7","secret":"SECRET-j8",
"token":"SECRET-j9","Authorization":"SECRET-j10","max_tokens":64,"key":"kept-key"}"#;

const TOKEN_ANSWER: &str = r#"{"access_token":"SECRET-a1","token_type":"Bearer","expires_in":3599,"refresh_token":"SECRET-a2","id_token":"SECRET-a3","scope":"openid"}"#;

const FORM_BODY: &str = "grant_type=authorization_code&code=SECRET-f1&client_id=app\
&client_secret=SECRET-f2&code_verifier=SECRET-f3&redirect_uri=https%3A%2F%2Fapp%2Fcb\
&refresh_token=SECRET-f4&password=SECRET-f5&assertion=SECRET-f6&client%5Fsecret=SECRET-f7";

/// Sends `body` to `path` through the proxy with every header above; returns what the client got.
async fn send(harness: &Harness, path: &str, content_type: &str, body: &'static str) -> Bytes {
    let mut request = Request::post(harness.url(path)).header("content-type", content_type);
    for (name, value) in HEADERS {
        request = request.header(name, value);
    }
    let response = client()
        .request(request.body(full(body)).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["location"],
        "https://app.example/cb?code=SECRET-loc-code&state=st1",
        "the client gets the upstream's headers as they were"
    );
    response.into_body().collect().await.unwrap().to_bytes()
}

/// Every stored hop, as text: paths, URLs, header values, bodies and errors.
async fn stored_text(store: &Store) -> String {
    let mut text = String::new();
    let lossy = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    for hop in store.all_hops().await.unwrap() {
        let (start, end) = (&hop.start, &hop.end);
        text.push_str(&format!("{} {} {:?}\n", start.path, start.url, end.error));
        for h in start
            .request_headers
            .iter()
            .chain(&end.response_headers)
            .chain(&end.response_trailers)
        {
            text.push_str(&format!("{}: {}\n", h.name, lossy(&h.value)));
        }
        text.push_str(&lossy(&end.request_body.bytes));
        text.push_str(&lossy(&end.response_body.bytes));
    }
    text
}

/// Every export of each of `traces` in `db`, as the `tracer` binary writes them.
fn exported_text(db: &std::path::Path, traces: &[String]) -> String {
    let mut all = String::new();
    for trace in traces {
        for format in ["json", "har", "otlp", "md", "mermaid", "html"] {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
                .args([
                    "--db",
                    db.to_str().unwrap(),
                    "export",
                    trace,
                    "--format",
                    format,
                ])
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "export {format}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(!output.stdout.is_empty(), "export {format} wrote nothing");
            all.push_str(&String::from_utf8_lossy(&output.stdout));
        }
    }
    all
}

fn assert_no_secret(text: &str, what: &str) {
    if let Some(at) = text.find("SECRET") {
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(80)
            .map_or(0, |(i, _)| i);
        panic!(
            "{what} holds a secret: …{}…",
            &text[from..(at + 40).min(text.len())]
        );
    }
}

#[tokio::test]
async fn secrets_in_headers_queries_and_json_bodies_are_redacted_in_the_record_only() {
    let (upstream, log) = logging_upstream("application/json", TOKEN_ANSWER).await;
    let harness = Harness::start_with_role(upstream, Role::Model, ProxySettings::default()).await;
    let answer = send(&harness, QUERY, "application/json", JSON_BODY).await;
    assert_eq!(
        answer, TOKEN_ANSWER,
        "the client gets the answer byte for byte"
    );
    let seen = log.lock().unwrap()[0].clone();
    assert_eq!(seen.target, QUERY, "the upstream gets the query as sent");
    assert_eq!(seen.body, JSON_BODY, "the upstream gets the body as sent");
    for (name, value) in HEADERS {
        assert_eq!(seen.headers[name], value, "{name} reaches the upstream");
    }

    let hops = settled_hops(&harness.store, 1).await;
    let (hop, end) = (&hops[0].start, &hops[0].end);
    for name in [
        "x-claude-code-session-id",
        "session-id",
        "thread-id",
        "x-request-id",
        "request-id",
    ] {
        let value = header(&hop.request_headers, name).unwrap();
        assert!(value.starts_with(b"corr-"), "correlation id {name} is kept");
    }
    assert_eq!(
        header(&hop.request_headers, "mcp-session-id").unwrap(),
        b"[redacted]"
    );
    assert!(
        hop.path.ends_with("&model=kept") && hop.path.contains("code=[redacted]"),
        "{}",
        hop.path
    );
    let request: serde_json::Value = serde_json::from_slice(&end.request_body.bytes).unwrap();
    assert_eq!(request["auth"]["nested"][0]["password"], "[redacted]");
    assert_eq!(request["messages"][0]["content"], "hi");
    assert_eq!(
        (request["max_tokens"].as_i64(), request["key"].as_str()),
        (Some(64), Some("kept-key"))
    );
    assert_eq!(
        end.request_body.total_len,
        JSON_BODY.len() as u64,
        "the wire length is kept"
    );
    let response: serde_json::Value = serde_json::from_slice(&end.response_body.bytes).unwrap();
    assert_eq!(response["access_token"], "[redacted]");
    assert_eq!(
        (response["expires_in"].as_i64(), response["scope"].as_str()),
        (Some(3599), Some("openid"))
    );
    assert_eq!(
        header(&end.response_headers, "location").unwrap(),
        b"https://app.example/cb?code=[redacted]&state=st1"
    );
    assert_eq!(
        header(&end.response_headers, "x-request-id").unwrap(),
        b"req-42"
    );
    assert_no_secret(&stored_text(&harness.store).await, "the database");

    let (_, _, store, dir) = harness.stop().await;
    tracer_live::correlate::group_new_hops(&store)
        .await
        .unwrap();
    let traces: Vec<String> = store
        .traces()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert!(!traces.is_empty());
    store.close().await;
    let exported = exported_text(&dir.path().join("tracer.db"), &traces);
    assert!(
        exported.contains("corr-claude"),
        "exports keep correlation ids"
    );
    assert_no_secret(&exported, "an export");

    // The redacted copy is longer than the wire's bytes (the marker outgrows `SECRET-j1`): the
    // hop log still imports, and exports again the same.
    let tracer = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{args:?}: {stderr}");
        output.stdout
    };
    let db = dir.path().join("tracer.db");
    let log = tracer(&[
        "--db",
        db.to_str().unwrap(),
        "export",
        &traces[0],
        "--format",
        "json",
    ]);
    let file = dir.path().join("trace.json");
    std::fs::write(&file, &log).unwrap();
    let again = dir.path().join("again.db");
    tracer(&[
        "--db",
        again.to_str().unwrap(),
        "import",
        file.to_str().unwrap(),
    ]);
    let log_again = tracer(&[
        "--db",
        again.to_str().unwrap(),
        "export",
        &traces[0],
        "--format",
        "json",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&log_again),
        String::from_utf8_lossy(&log)
    );
}

#[tokio::test]
async fn oauth_form_requests_are_redacted_field_by_field() {
    let (upstream, log) = logging_upstream("application/json;charset=UTF-8", TOKEN_ANSWER).await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    let answer = send(
        &harness,
        "/token",
        "application/x-www-form-urlencoded",
        FORM_BODY,
    )
    .await;
    assert_eq!(answer, TOKEN_ANSWER);
    assert_eq!(
        log.lock().unwrap()[0].body,
        FORM_BODY,
        "the upstream gets the form as sent"
    );
    let hops = settled_hops(&harness.store, 1).await;
    assert_eq!(
        String::from_utf8_lossy(&hops[0].end.request_body.bytes),
        "grant_type=authorization_code&code=[redacted]&client_id=app\
&client_secret=[redacted]&code_verifier=[redacted]&redirect_uri=https%3A%2F%2Fapp%2Fcb\
&refresh_token=[redacted]&password=[redacted]&assertion=[redacted]&client%5Fsecret=[redacted]"
    );
    assert_no_secret(&stored_text(&harness.store).await, "the database");
    harness.stop().await;
}

#[tokio::test]
async fn a_big_json_body_stored_in_pieces_is_redacted_across_the_pieces() {
    // About 1.5 MiB: six pieces of 256 KiB, with secrets on both sides of every cut.
    let items: Vec<String> = (0..12_000)
        .map(|i| {
            format!(
                r#"{{"n":{i},"password":"SECRET-big-{i:05}-padding-padding","note":"{}"}}"#,
                "x".repeat(60)
            )
        })
        .collect();
    let body: &'static str =
        Box::leak(format!(r#"{{"items":[{}]}}"#, items.join(",")).into_boxed_str());
    let (upstream, log) = logging_upstream("application/json", "{}").await;
    let harness = Harness::start(upstream, ProxySettings::default()).await;
    send(&harness, "/big", "application/json", body).await;
    assert_eq!(
        log.lock().unwrap()[0].body,
        body,
        "the upstream gets the body as sent"
    );
    let hops = settled_hops(&harness.store, 1).await;
    let kept = &hops[0].end.request_body;
    assert!(!kept.truncated);
    assert_eq!(kept.total_len, body.len() as u64);
    let value: serde_json::Value = serde_json::from_slice(&kept.bytes).unwrap();
    let items = value["items"].as_array().unwrap();
    assert_eq!(items.len(), 12_000);
    assert!(items.iter().all(|item| item["password"] == "[redacted]"));
    assert_eq!(items[11_999]["n"], 11_999);
    assert_no_secret(&String::from_utf8_lossy(&kept.bytes), "the stored body");
    harness.stop().await;
}

#[tokio::test]
async fn no_redact_keeps_the_record_byte_exact() {
    let (upstream, _log) = logging_upstream("application/json", TOKEN_ANSWER).await;
    let settings = ProxySettings {
        redact: false,
        ..ProxySettings::default()
    };
    let harness = Harness::start(upstream, settings).await;
    send(&harness, QUERY, "application/json", JSON_BODY).await;
    let hops = settled_hops(&harness.store, 1).await;
    let (hop, end) = (&hops[0].start, &hops[0].end);
    assert_eq!(hop.path, QUERY);
    assert_eq!(end.request_body.bytes, JSON_BODY.as_bytes());
    assert_eq!(end.response_body.bytes, TOKEN_ANSWER.as_bytes());
    for (name, value) in HEADERS {
        assert_eq!(
            header(&hop.request_headers, name).unwrap(),
            value.as_bytes(),
            "{name}"
        );
    }
    harness.stop().await;
}

#[tokio::test]
async fn credentials_in_a_route_upstream_are_never_stored_or_answered() {
    let (upstream, log) = logging_upstream("application/json", "{}").await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tracer.db")).await.unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let routes = vec![
        Route::new(
            "model",
            "up",
            "127.0.0.1:0",
            &format!("http://user:SECRET-ui@{upstream}/base"),
        )
        .unwrap(),
        Route::new(
            "mcp",
            "down",
            "127.0.0.1:0",
            &format!("http://user:SECRET-down@{closed}"),
        )
        .unwrap(),
    ];
    let proxy = tracer_record::proxy::Proxy::bind(routes, ProxySettings::default())
        .await
        .unwrap();
    let served = proxy.routes();
    let listens: Vec<_> = served.iter().map(|r| r.listen).collect();
    let (recorder, writer) = tracer_store::Recorder::spawn(store.clone()).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(recorder, async move {
        let _ = stopped.await;
    }));
    tracer_record::proxy::announce::announce_routes(&store, &served).await;
    let announced = store.served_routes_named("up").await.unwrap();
    assert_eq!(
        announced[0].upstream,
        format!("http://[redacted]@{upstream}/base")
    );

    let ok = client()
        .request(
            Request::get(format!("http://{}/p?x=1", listens[0]))
                .body(full(""))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    assert_eq!(log.lock().unwrap()[0].target, "/base/p?x=1");
    let failed = client()
        .request(
            Request::get(format!("http://{}/mcp", listens[1]))
                .body(full(""))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(failed.status(), 502);
    let said = failed.into_body().collect().await.unwrap().to_bytes();
    let said = String::from_utf8_lossy(&said);
    assert!(
        said.contains("[redacted]@127.0.0.1"),
        "the 502 names the upstream: {said}"
    );
    assert_no_secret(&said, "the 502 answer");
    let hops = settled_hops(&store, 2).await;
    let up = hops.iter().find(|h| h.start.route == "up").unwrap();
    assert_eq!(
        up.start.url,
        format!("http://[redacted]@{upstream}/base/p?x=1")
    );
    assert_no_secret(&stored_text(&store).await, "the database");
    let _ = stop.send(());
    run.await.unwrap();
    writer.await.unwrap();
}

#[tokio::test]
async fn a_loop_through_a_route_with_credentials_is_refused_without_them() {
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let route = Route::new(
        "model",
        "self",
        &listen.to_string(),
        &format!("http://user:SECRET-loop@{listen}"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tracer.db")).await.unwrap();
    let proxy = tracer_record::proxy::Proxy::bind(vec![route], ProxySettings::default())
        .await
        .unwrap();
    let (recorder, writer) = tracer_store::Recorder::spawn(store.clone()).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(recorder, async move {
        let _ = stopped.await;
    }));
    let answer = client()
        .request(
            Request::get(format!("http://{listen}/api/tags"))
                .body(full(""))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), 508);
    let said = answer.into_body().collect().await.unwrap().to_bytes();
    let said = String::from_utf8_lossy(&said).into_owned();
    assert!(said.contains("[redacted]@127.0.0.1"), "{said}");
    assert_no_secret(&said, "the 508 answer");
    let _ = stop.send(());
    run.await.unwrap();
    writer.await.unwrap();
    assert_no_secret(&stored_text(&store).await, "the database");
}
