//! open-webui + mcpo + the phonebook (tests/fixtures/open-webui/, recorded once from the real
//! programs) replayed through a real `tracer proxy`: every recorded request is sent again to the
//! proxy's route at its recorded moment (gaps shortened), and stand-ins behind the routes answer
//! with the recorded responses at theirs, so the proxy records, redacts and groups live as it did.
//! Then: open-webui's housekeeping is a side call in a setup trace, never a request trace; the
//! native and legacy chats are one trace each, explained in open-webui's own pattern; the
//! model's `tool_get_phonenumber_post` is linked to MCP's `get_phonenumber`; and the stored
//! sign-in bodies hold no password.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};

use crate::agent_doubles::{client, serve};
use crate::session_fixtures::{PackedHop, load_fixture};
use tracer_store::Store;
use tracer_store::hops::StoredHop;
use tracer_wire::hop::Role;

const QUESTION: &str = "What is the phone number of Ashley Johnson?";
const PASSWORD: &str = "test-fake-password-0000";
/// The longest gap between two recorded moments the replay keeps.
const MAX_GAP_NS: i64 = 400_000_000;

fn free_port() -> u16 {
    crate::free_ports::free_port()
}

/// Recorded moments mapped onto the replay's clock: order kept, each gap at most `MAX_GAP_NS`.
struct Clock {
    moments: Vec<i64>,
    replayed: Vec<i64>,
}

impl Clock {
    fn of(hops: &[PackedHop]) -> Clock {
        let mut moments: Vec<i64> = hops
            .iter()
            .flat_map(|h| [Some(h.start.started_unix_ns), h.end.response_ended_unix_ns])
            .flatten()
            .collect();
        moments.sort_unstable();
        moments.dedup();
        let mut replayed = Vec::with_capacity(moments.len());
        for (i, at) in moments.iter().enumerate() {
            let before = if i == 0 { 0 } else { replayed[i - 1] };
            let gap = if i == 0 { 0 } else { at - moments[i - 1] };
            replayed.push(before + gap.min(MAX_GAP_NS));
        }
        Clock { moments, replayed }
    }

    fn at(&self, recorded: i64) -> Duration {
        let i = self.moments.partition_point(|m| *m < recorded);
        let ns = self.replayed[i.min(self.replayed.len() - 1)];
        Duration::from_nanos(u64::try_from(ns).unwrap())
    }
}

/// Headers a replay sets itself (or the proxy does: `traceparent` on the agent route).
fn replayed_header(name: &str) -> bool {
    !matches!(
        name.to_ascii_lowercase().as_str(),
        "host" | "content-length" | "transfer-encoding" | "connection" | "traceparent"
    )
}

/// A stand-in for one route's upstream: each request gets the first unanswered recorded hop of
/// the same method and path, at the moment its response ended.
async fn stand_in(hops: Vec<PackedHop>, clock: Arc<Clock>, t0: Instant) -> std::net::SocketAddr {
    let queue = Arc::new(Mutex::new(
        hops.into_iter().map(|h| (h, false)).collect::<Vec<_>>(),
    ));
    serve(move |req: Request<hyper::body::Incoming>| {
        let queue = queue.clone();
        let clock = clock.clone();
        async move {
            let (method, path) = (req.method().to_string(), req.uri().to_string());
            let body = req.into_body().collect().await.unwrap().to_bytes();
            let hop = {
                let mut queue = queue.lock().unwrap();
                let same = |h: &PackedHop, exact: bool| {
                    h.start.method == method
                        && h.start.path == path
                        && (!exact || h.end.request_body.bytes == body)
                };
                // The unanswered hop with these very bytes, else of this method and path; a
                // request sent twice (a client's retry) gets the answer again.
                let at = [true, false]
                    .into_iter()
                    .find_map(|exact| queue.iter().position(|(h, used)| !used && same(h, exact)))
                    .or_else(|| queue.iter().position(|(h, _)| same(h, false)))
                    .unwrap_or_else(|| panic!("no recorded hop for {method} {path}"));
                queue[at].1 = true;
                queue[at].0.clone()
            };
            let end = hop
                .end
                .response_ended_unix_ns
                .unwrap_or(hop.start.started_unix_ns);
            tokio::time::sleep_until((t0 + clock.at(end)).into()).await;
            let mut response = Response::new(Full::new(Bytes::from(hop.end.response_body.bytes)));
            *response.status_mut() = http::StatusCode::from_u16(hop.end.status.unwrap()).unwrap();
            for header in hop
                .end
                .response_headers
                .iter()
                .filter(|h| replayed_header(&h.name))
            {
                response.headers_mut().append(
                    http::HeaderName::from_bytes(header.name.as_bytes()).unwrap(),
                    http::HeaderValue::from_bytes(header.value.as_slice()).unwrap(),
                );
            }
            response
        }
    })
    .await
}

/// Replays the recording through `tracer proxy` (redacting, as by default); the stored hops.
async fn replay() -> (Vec<StoredHop>, std::path::PathBuf, tempfile::TempDir) {
    let hops = load_fixture("open-webui/phonebook-run.json");
    let clock = Arc::new(Clock::of(&hops));
    let t0 = Instant::now() + Duration::from_millis(800);
    let routes = ["open-webui", "ollama", "mcpo", "phonebook"];
    let mut ports = HashMap::new();
    let mut args: Vec<String> = Vec::new();
    for route in routes {
        let recorded: Vec<PackedHop> = hops
            .iter()
            .filter(|h| h.start.route == route)
            .cloned()
            .collect();
        let role = recorded[0].start.role;
        let upstream = stand_in(recorded, clock.clone(), t0).await;
        let port = free_port();
        ports.insert(route, port);
        args.push("--route".into());
        args.push(format!(
            "{}:{route}=127.0.0.1:{port}=http://{upstream}",
            role.as_str()
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .arg("proxy")
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for port in ports.values() {
        while tokio::net::TcpStream::connect(("127.0.0.1", *port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let http = client();
    let mut tasks = Vec::new();
    for hop in hops.iter().cloned() {
        let http = http.clone();
        let port = ports[hop.start.route.as_str()];
        let at = t0 + clock.at(hop.start.started_unix_ns);
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            let mut request = Request::builder()
                .method(hop.start.method.as_str())
                .uri(format!("http://127.0.0.1:{port}{}", hop.start.path));
            for header in hop
                .start
                .request_headers
                .iter()
                .filter(|h| replayed_header(&h.name))
            {
                request = request.header(header.name.as_str(), header.value.as_slice());
            }
            let body = Full::new(Bytes::from(hop.end.request_body.bytes.clone()));
            let response = http.request(request.body(body).unwrap()).await.unwrap();
            let _ = response.into_body().collect().await;
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    // The sign-in as `curl -d '{"email": …, "password": …}'` sends it: JSON labelled a form.
    let form = Request::post(format!(
        "http://127.0.0.1:{}/api/v1/auths/signin",
        ports["open-webui"]
    ))
    .header("content-type", "application/x-www-form-urlencoded")
    .body(Full::new(Bytes::from(format!(
        "{{\"email\": \"user@example.com\", \"password\": \"{PASSWORD}\"}}"
    ))))
    .unwrap();
    let _ = http.request(form).await;
    let store = Store::open(&db).await.unwrap();
    let expected = hops.len() + 1;
    for _ in 0..400 {
        let stored = store.all_hops().await.unwrap();
        if stored.len() == expected && stored.iter().all(|h| h.trace_id.is_some()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(proxy.wait().unwrap().success());
    let stored = store.all_hops().await.unwrap();
    assert_eq!(stored.len(), expected, "every request recorded");
    (stored, db, dir)
}

fn show(db: &std::path::Path, trace: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(["show", trace])
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout).replace("\n       ", " ")
}

/// The `tools/call` mcpo made is linked to the model's call of the REST route's operation id.
fn assert_linked(shown: &str) {
    let call = shown
        .lines()
        .find(|l| l.contains("tools/call get_phonenumber {\"name\":\"Ashley Johnson\"}"))
        .expect("the tools/call");
    assert!(
        call.contains(" · asked for in message ") && call.contains(" as tool_get_phonenumber_post"),
        "{call}"
    );
}

fn trace_of<'a>(hops: &'a [StoredHop], path: &str, nth: usize) -> &'a str {
    let hop = hops
        .iter()
        .filter(|h| h.start.path == path)
        .nth(nth)
        .expect("the hop");
    hop.trace_id.as_deref().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn open_webui_replayed_through_the_proxy_is_read_in_its_own_pattern() {
    let (hops, db, _dir) = replay().await;

    // Housekeeping: sign-up, sign-in, the model list (with Ollama's /api/tags and /api/ps), the
    // tool-server config: one setup trace, no request trace of their own.
    let setup = trace_of(&hops, "/api/v1/auths/signup", 0);
    for path in [
        "/api/v1/auths/signin",
        "/api/models",
        "/api/tags",
        "/api/ps",
        "/api/v1/configs/tool_servers",
        "/api/v1/tools/",
    ] {
        assert_eq!(trace_of(&hops, path, 0), setup, "{path}");
    }
    let native = trace_of(&hops, "/api/chat/completions", 0);
    let legacy = trace_of(&hops, "/api/chat/completions", 1);
    assert_ne!(native, legacy);
    for chat in [native, legacy] {
        let in_chat: Vec<&StoredHop> = hops
            .iter()
            .filter(|h| h.trace_id.as_deref() == Some(chat))
            .collect();
        assert_eq!(
            in_chat.len(),
            6,
            "agent, openapi.json, 2 model calls, REST, tools/call"
        );
        assert_eq!(
            in_chat
                .iter()
                .filter(|h| h.start.role == Role::Model)
                .count(),
            2
        );
    }
    let listing = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .arg("ls")
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    assert_eq!(listing.matches(QUESTION).count(), 2, "{listing}");
    let untitled = listing
        .lines()
        .skip(1)
        .filter(|l| l.trim_end().ends_with(" -"))
        .count();
    assert_eq!(untitled, 0, "no untitled trace: {listing}");

    let setup_text = show(&db, setup);
    assert!(
        setup_text.contains("side call (the host's own housekeeping)")
            && setup_text.contains("signing up or in")
            && setup_text.contains("the model server's model list"),
        "{setup_text}"
    );

    // Native: the model's own tool_calls, history re-sent with the role: tool message.
    let native_text = show(&db, native);
    assert!(native_text.contains(&format!(
        "\"{QUESTION}\" to the host, tool ids server:phonebook"
    )));
    assert!(native_text.contains("You ask the host (the agent), not the model server"));
    assert!(native_text.contains("the model asks for tool tool_get_phonenumber_post"));
    assert!(native_text.contains("The host re-sends the whole history"));
    assert_linked(&native_text);

    // Legacy: a selection call with the tools in the prompt, then a rewritten conversation.
    let legacy_text = show(&db, legacy);
    assert!(
        legacy_text.contains("This is the host's tool-selection call"),
        "{legacy_text}"
    );
    assert!(legacy_text.contains(
        "described in the system prompt (tool_get_phonenumber_post), and 0 tools are offered"
    ));
    assert_linked(&legacy_text);
    assert!(
        legacy_text.contains("The host rewrote the conversation rather than re-sending it: it pasted the tool output into the prompt as context (\"555-11111111\" as <source name=\"server:phonebook/tool_get_phonenumber_post\">)"),
        "{legacy_text}"
    );
    assert!(!legacy_text.contains("re-sends the whole history"));
    assert!(legacy_text.contains("reply: \"Ashley Johnson's phone number is 555-11111111.\""));

    // What is stored: no password, no session token, in either sign-in shape.
    let auths: Vec<&StoredHop> = hops
        .iter()
        .filter(|h| h.start.path.starts_with("/api/v1/auths/"))
        .collect();
    assert_eq!(auths.len(), 3);
    for hop in auths {
        let request = String::from_utf8_lossy(&hop.end.request_body.bytes);
        assert!(!request.contains(PASSWORD), "{request}");
        assert!(
            request.contains("\"password\": \"[redacted]\""),
            "{request}"
        );
        let response = String::from_utf8_lossy(&hop.end.response_body.bytes);
        assert!(!response.contains("eyJ"), "the session token: {response}");
    }
}
