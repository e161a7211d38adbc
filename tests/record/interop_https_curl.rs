//! The forward proxy with curl as the client (`curl --proxy ... --cacert`): HTTPS to a local
//! TLS upstream decrypted and recorded as an ordinary hop, a host outside `--intercept`
//! tunnelled with its bytes untouched (one tunnel hop), a client that does not trust tracer's CA
//! told so in the record, and absolute-form `http://` forwarded and recorded.

use std::path::Path;
use std::process::Command;

use http::{Request, Response};
use hyper::body::Incoming;
use tracer_wire::hop::{HopState, Role};

use super::https_support::{
    HOST, TestBody, TestPki, TracerProcess, full, hops_in, plain_upstream, tls_upstream,
};

const TUNNELLED: &str = "raw.example.test";
const REPLY: &str = r#"{"id":"chatcmpl-9","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"via the forward proxy"},"finish_reason":"stop"}]}"#;

async fn reply(request: Request<Incoming>) -> Response<TestBody> {
    let path = request.uri().path().to_string();
    let mut response = Response::new(full(if path == "/hello" {
        "plain hello".to_string()
    } else {
        REPLY.to_string()
    }));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    response
}

/// curl's path, or None (with the reason printed) when it is missing and TRACER_INTEROP is unset.
fn curl() -> Option<&'static str> {
    let found = Command::new("curl").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var("TRACER_INTEROP").as_deref() != Ok("1"),
            "TRACER_INTEROP=1 but curl is not installed"
        );
        eprintln!("skipping: curl is not installed (apt-get install curl)");
        return None;
    }
    Some("curl")
}

fn run_curl(args: &[&str]) -> (bool, String, String) {
    let output = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "20"])
        .args(args)
        .env_remove("SSL_CERT_FILE")
        .env_remove("CURL_CA_BUNDLE")
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).to_string(),
        String::from_utf8_lossy(&output.stderr).to_string(),
    )
}

fn ca_of(dir: &Path) -> String {
    dir.join("tracer-ca.pem").display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_through_the_forward_proxy_is_decrypted_tunnelled_or_told_untrusted() {
    let Some(curl) = curl() else { return };
    let _ = curl;
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(&[HOST, TUNNELLED]);
    let test_ca = pki.write_ca(dir.path(), "upstream-ca.pem");
    let upstream = tls_upstream(&pki, &["h2", "http/1.1"], reply).await;
    let plain = plain_upstream(reply).await;
    let ca_dir = dir.path().join("ca");
    let db = dir.path().join("tracer.db");
    let args = [
        "proxy".to_string(),
        "--forward".into(),
        "127.0.0.1:0".into(),
        "--ca-dir".into(),
        ca_dir.display().to_string(),
        "--intercept".into(),
        format!("*.nowhere.test,{HOST}"),
        "--upstream-ca".into(),
        test_ca.display().to_string(),
        "--resolve".into(),
        format!("{HOST}:443={}", upstream.addr),
        "--resolve".into(),
        format!("{TUNNELLED}:443={}", upstream.addr),
        "--resolve".into(),
        format!("plain.example.test:80={plain}"),
        "--host-role".into(),
        "plain.example.test=mcp:plain-notes".into(),
        "--host-role".into(),
        format!("{HOST}=model"),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let proxy = TracerProcess::spawn(&db, &args, &[], 3);
    let forward = format!("http://{}", proxy.listen_of("forward"));
    let key_mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(ca_dir.join("tracer-ca-key.pem"))
            .unwrap()
            .permissions()
            .mode()
    };
    assert_eq!(key_mode & 0o777, 0o600);

    // Intercepted: curl trusts tracer's CA and sees the upstream's answer.
    let body = r#"{"model":"gpt-test","messages":[{"role":"user","content":"hello proxy"}]}"#;
    let url = format!("https://{HOST}/v1/chat/completions");
    let (ok, out, err) = run_curl(&[
        "--proxy",
        &forward,
        "--cacert",
        &ca_of(&ca_dir),
        "-H",
        "content-type: application/json",
        "-H",
        "authorization: Bearer sk-secret",
        "--data",
        body,
        &url,
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, REPLY);

    // Not intercepted: the tunnel carries the upstream's own TLS, verified with its own CA.
    let tunnelled = format!("https://{TUNNELLED}/v1/chat/completions");
    let (ok, out, err) = run_curl(&[
        "--proxy",
        &forward,
        "--cacert",
        test_ca.to_str().unwrap(),
        &tunnelled,
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, REPLY, "tunnelled bytes untouched");

    // A client that does not trust tracer's CA refuses; the record says so and what to do.
    let (ok, _, err) = run_curl(&[
        "--proxy",
        &forward,
        "--cacert",
        test_ca.to_str().unwrap(),
        &url,
    ]);
    assert!(!ok, "curl must refuse a certificate it cannot verify");
    assert!(err.contains("certificate"), "{err}");

    // Absolute-form http://.
    let (ok, out, err) = run_curl(&[
        "--proxy",
        &forward,
        "http://plain.example.test/hello?key=k1",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, "plain hello");
    proxy.stop();

    let hops = hops_in(&db).await;
    assert_eq!(hops.len(), 4, "{hops:#?}");
    let model = &hops[0];
    assert_eq!(
        model.start.route, HOST,
        "without a NAME the route is the host"
    );
    assert_eq!(model.start.role, Role::Model);
    assert_eq!(model.start.method, "POST");
    assert_eq!(model.start.path, "/v1/chat/completions");
    assert_eq!(
        model.start.url,
        format!("https://{HOST}:443/v1/chat/completions")
    );
    assert_eq!(model.end.request_body.bytes, body.as_bytes(), "decrypted");
    assert_eq!(model.end.response_body.bytes, REPLY.as_bytes());
    let auth = model
        .start
        .request_headers
        .iter()
        .find(|h| h.name == "authorization")
        .unwrap();
    assert_eq!(auth.value, b"[redacted]");

    let tunnel = &hops[1];
    assert_eq!(tunnel.start.method, "CONNECT");
    assert_eq!(tunnel.start.path, format!("{TUNNELLED}:443"));
    assert_eq!(tunnel.state, HopState::Complete);
    assert!(tunnel.end.request_body.bytes.is_empty(), "no content kept");
    assert!(tunnel.end.request_body.total_len > 200, "{:?}", tunnel.end);
    assert!(tunnel.end.response_body.total_len > REPLY.len() as u64);

    let rejected = &hops[2];
    assert_eq!(rejected.start.method, "CONNECT");
    assert_eq!(rejected.state, HopState::Failed);
    let error = rejected.end.error.clone().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "the client rejected tracer's certificate for {HOST}"
        )),
        "{error}"
    );
    assert!(error.contains("tracer ca --env"), "{error}");

    // Both are explained in words.
    let shown = |hop: &tracer_store::hops::StoredHop| {
        let trace = hop.trace_id.clone().expect("grouped");
        let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
            .arg("--db")
            .arg(&db)
            .args(["show", &trace])
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let text = shown(tunnel);
    assert!(
        text.contains(&format!("tunnel to {TUNNELLED}:443, not decrypted")),
        "{text}"
    );
    let closed = format!(
        "tunnel closed: {} bytes up, {} bytes down",
        tunnel.end.request_body.total_len, tunnel.end.response_body.total_len
    );
    assert!(text.contains(&closed), "{text}");
    let text = shown(rejected);
    assert!(
        text.contains(&format!("TLS handshake for {HOST}:443, to decrypt it")),
        "{text}"
    );
    assert!(text.contains("rejected tracer's certificate"), "{text}");
    // Said as what it is: the client refused the handshake; no upstream, no 502.
    assert!(
        text.contains("handshake refused: the client rejected"),
        "{text}"
    );
    // A status is printed between spaces ("  200  "): the random trace id may hold the digits.
    assert!(!text.contains(" 502 "), "{text}");
    eprintln!("{text}");

    let plain_hop = &hops[3];
    // --host-role wins over the request (a GET would be `other`).
    assert_eq!(plain_hop.start.route, "plain-notes");
    assert_eq!(plain_hop.start.role, Role::Mcp);
    assert_eq!(plain_hop.start.path, "/hello?key=[redacted]");
    assert_eq!(plain_hop.end.response_body.bytes, b"plain hello");
}
