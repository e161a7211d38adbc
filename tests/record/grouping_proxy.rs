//! Grouping through the real proxy (`tracer proxy` as a process, grouping live as it runs): a
//! test host behind an `agent` route serves 100 interleaved concurrent requests, each calling a
//! model double and an MCP double through the same proxy's `model` and `mcp` routes. Without
//! `traceparent` propagation every hop that carries content evidence lands in the right trace,
//! with and without busy threads beside the proxy; with it, all of them. `correlate --rebuild`
//! decides every hop as live grouping did. A setup trace at host start-up stays apart from the
//! first request.
//!
//! A `tools/list` made inside each of many concurrent requests carries nothing that names its
//! request: without `traceparent` it is placed by order, which a busy host does not keep. That
//! case is measured (and its evidence-carrying hops held to all of them) in its own test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::agent_doubles as doubles;
use crate::contention::Contention;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use doubles::{TAG, TestHost, client, mcp_double, model_double};
use http::Request;
use http_body_util::{BodyExt, Full};
use tracer_store::Store;
use tracer_store::hops::StoredHop;
use tracer_wire::hop::header_text;

const REQUESTS: usize = 100;

fn free_port() -> u16 {
    crate::free_ports::free_port()
}

/// `tracer proxy` with agent, model and mcp routes, and the test host behind the agent route.
struct System {
    proxy: ProxyProcess,
    db: PathBuf,
    agent_port: u16,
    host: Arc<TestHost>,
    _dir: tempfile::TempDir,
}

impl System {
    async fn start(propagate: bool, list_tools_per_request: bool) -> System {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("tracer.db");
        let (agent_port, model_port, mcp_port) = (free_port(), free_port(), free_port());
        let model: SocketAddr = model_double().await;
        let mcp: SocketAddr = mcp_double().await;
        let host = TestHost::new(
            format!("http://127.0.0.1:{model_port}/api/chat"),
            format!("http://127.0.0.1:{mcp_port}/mcp"),
            propagate,
            list_tools_per_request,
        );
        let host_addr = host.serve().await;
        let proxy = Command::new(env!("CARGO_BIN_EXE_tracer"))
            .arg("--db")
            .arg(&db)
            .arg("proxy")
            .args([
                "--route",
                &format!("agent=127.0.0.1:{agent_port}=http://{host_addr}"),
            ])
            .args([
                "--route",
                &format!("model=127.0.0.1:{model_port}=http://{model}"),
            ])
            .args(["--route", &format!("mcp=127.0.0.1:{mcp_port}=http://{mcp}")])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", mcp_port))
                .await
                .is_ok()
                && tokio::net::TcpStream::connect(("127.0.0.1", agent_port))
                    .await
                    .is_ok()
            {
                return System {
                    proxy: ProxyProcess(Some(proxy)),
                    db,
                    agent_port,
                    host,
                    _dir: dir,
                };
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        drop(ProxyProcess(Some(proxy)));
        panic!("tracer proxy did not start listening");
    }

    /// Sends `count` user requests at once, each a few ms after the last; checks each reply.
    async fn run_requests(&self, count: usize) {
        let http = client();
        let tasks: Vec<_> = (0..count)
            .map(|i| {
                let http = http.clone();
                let url = format!("http://127.0.0.1:{}/agent", self.agent_port);
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(2 * i as u64)).await;
                    let item = format!("item-{i:03}");
                    let body = serde_json::json!({"message": format!("Add {item} to my notes")});
                    let request = Request::post(url)
                        .header("content-type", "application/json")
                        .header(TAG, format!("req-{i}"))
                        .body(Full::new(Bytes::from(body.to_string())))
                        .unwrap();
                    let response = http.request(request).await.unwrap();
                    assert_eq!(response.status(), 200);
                    let bytes = response.into_body().collect().await.unwrap().to_bytes();
                    let reply: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                    assert_eq!(reply["reply"], format!("I've added \"{item}\"."));
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    }

    /// Waits until the running proxy has grouped `count` hops (live grouping), then stops it.
    /// The database's directory lives as long as the store handed back.
    async fn grouped_then_stopped(
        mut self,
        count: usize,
    ) -> (Vec<StoredHop>, Store, tempfile::TempDir) {
        let store = Store::open(&self.db).await.unwrap();
        let mut live = false;
        for _ in 0..1200 {
            let hops = store.all_hops().await.unwrap();
            if hops.len() == count && hops.iter().all(|h| h.trace_id.is_some()) {
                live = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(live, "the running proxy grouped every hop");
        stop(self.proxy.0.take().unwrap());
        let hops = store.all_hops().await.unwrap();
        (hops, store, self._dir)
    }
}

/// These tests measure grouping under load; run together on two cores they would measure each
/// other. Each holds this while it runs.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The proxy child, killed if a test fails before it is stopped.
struct ProxyProcess(Option<Child>);

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn stop(proxy: Child) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let output = proxy.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("0 not written"), "{stderr}");
}

fn tag(hop: &StoredHop) -> String {
    header_text(&hop.start.request_headers, TAG)
        .unwrap_or_default()
        .to_string()
}

/// Whether each hop's trace is the one its user request's agent hop opened.
fn placed_right(hops: &[StoredHop]) -> Vec<bool> {
    let opened: HashMap<String, String> = hops
        .iter()
        .filter(|h| h.start.role == tracer_wire::hop::Role::Agent)
        .map(|h| (tag(h), h.start.id.clone()))
        .collect();
    hops.iter()
        .map(|h| h.trace_id.is_some() && h.trace_id.as_ref() == opened.get(&tag(h)))
        .collect()
}

/// Over the hops of user requests (not start-up): (right, total, discovery calls astray).
fn score_requests(hops: &[StoredHop]) -> (usize, usize, usize) {
    let requests: Vec<StoredHop> = hops.iter().filter(|h| tag(h) != "setup").cloned().collect();
    let right = placed_right(&requests);
    let discovery_astray = requests
        .iter()
        .zip(&right)
        .filter(|(h, right)| {
            !**right
                && String::from_utf8_lossy(&h.end.request_body.bytes).contains("\"tools/list\"")
        })
        .count();
    (
        right.iter().filter(|r| **r).count(),
        requests.len(),
        discovery_astray,
    )
}

/// The misplaced hops, one line each, for a failure message.
fn misplaced(hops: &[StoredHop]) -> String {
    let right = placed_right(hops);
    hops.iter()
        .zip(right)
        .filter(|(h, right)| !right && tag(h) != "setup")
        .map(|(h, _)| {
            let body = String::from_utf8_lossy(&h.end.request_body.bytes);
            format!(
                "{} {} {} seq {} start {} end {:?}: {}",
                tag(h),
                h.start.role.as_str(),
                h.start.path,
                h.seq,
                h.start.started_unix_ns,
                h.end.response_ended_unix_ns,
                &body[..body.len().min(160)]
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn percent(right: usize, total: usize) -> f64 {
    100.0 * right as f64 / total.max(1) as f64
}

/// `tracer correlate --rebuild` over the stopped proxy's database decides as live grouping did.
async fn assert_rebuild_decides_the_same(store: &Store, live: &[StoredHop]) {
    use tracer_live::correlate::{GroupScope, correlate};
    use tracer_trace::GroupOptions;
    correlate(store, GroupOptions::default(), GroupScope::Rebuild)
        .await
        .unwrap();
    let rebuilt: HashMap<String, Option<String>> = store
        .all_hops()
        .await
        .unwrap()
        .into_iter()
        .map(|h| (h.start.id, h.trace_id))
        .collect();
    let differ: Vec<String> = live
        .iter()
        .filter(|h| rebuilt.get(&h.start.id) != Some(&h.trace_id))
        .map(|h| format!("{} {} {}", tag(h), h.start.role.as_str(), h.start.id))
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} hops grouped otherwise by a rebuild: {differ:?}",
        differ.len(),
        live.len()
    );
}

/// The host: tools listed once at start-up, then per request the model, the tool the
/// model asked for, and the model again with the user's text in the history. Every hop carries
/// content evidence, so every hop lands in its trace, under load or not.
async fn a_host_that_propagates_nothing(busy: usize) {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let system = System::start(false, false).await;
    let contention = Contention::start(busy);
    system.host.start_up().await;
    system.run_requests(REQUESTS).await;
    let (hops, store, _dir) = system.grouped_then_stopped(3 + REQUESTS * 4).await;
    drop(contention);
    let (right, total, _) = score_requests(&hops);
    println!(
        "no traceparent, {busy} busy threads: {right}/{total} hops in the right trace ({:.1}%)",
        percent(right, total)
    );
    assert_eq!(total, REQUESTS * 4);
    assert_eq!(
        right,
        total,
        "{right}/{total} hops in the right trace:\n{}",
        misplaced(&hops)
    );
    let setup: Vec<&StoredHop> = hops.iter().filter(|h| tag(h) == "setup").collect();
    let setup_trace = store
        .trace(setup[0].trace_id.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(setup_trace.kind, "setup");
    assert!(
        setup
            .iter()
            .all(|h| h.trace_id.as_deref() == Some(setup_trace.id.as_str()))
    );
    assert_eq!(store.traces().await.unwrap().len(), REQUESTS + 1);
    assert_rebuild_decides_the_same(&store, &hops).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_host_that_propagates_nothing_gets_every_hop_placed_by_its_evidence() {
    a_host_that_propagates_nothing(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_host_that_propagates_nothing_gets_every_hop_placed_under_cpu_contention() {
    a_host_that_propagates_nothing(3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_host_that_propagates_traceparent_gets_every_hop_placed() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    // The article's host, tools listed inside every request.
    let system = System::start(true, true).await;
    system.run_requests(REQUESTS).await;
    let (hops, store, _dir) = system.grouped_then_stopped(REQUESTS * 5).await;
    let (right, total, _) = score_requests(&hops);
    println!(
        "traceparent: {right}/{total} hops in the right trace ({:.1}%)",
        percent(right, total)
    );
    assert_eq!((right, total), (REQUESTS * 5, REQUESTS * 5));
    assert_eq!(store.traces().await.unwrap().len(), REQUESTS);
    assert_rebuild_decides_the_same(&store, &hops).await;
}

/// A `tools/list` inside each of many concurrent requests names no request: it is placed by
/// order (measured, not asserted). Every hop with content evidence is placed by it, under load
/// or not, and a rebuild decides every hop as live grouping did.
async fn per_request_discovery(busy: usize) {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let system = System::start(false, true).await;
    let contention = Contention::start(busy);
    system.run_requests(REQUESTS).await;
    let (hops, store, _dir) = system.grouped_then_stopped(REQUESTS * 5).await;
    drop(contention);
    let (right, total, discovery_astray) = score_requests(&hops);
    let evidence_total = total - REQUESTS;
    let evidence_right = right - (REQUESTS - discovery_astray);
    println!(
        "no traceparent, tools/list in every request, {busy} busy threads: {right}/{total} hops \
         in the right trace ({:.1}%); with content evidence {evidence_right}/{evidence_total} \
         ({:.1}%); tools/list calls placed right {}/{REQUESTS}",
        percent(right, total),
        percent(evidence_right, evidence_total),
        REQUESTS - discovery_astray,
    );
    assert_eq!(total, REQUESTS * 5);
    assert_eq!(
        evidence_right,
        evidence_total,
        "hops with evidence in the right trace:\n{}",
        misplaced(&hops)
    );
    assert_rebuild_decides_the_same(&store, &hops).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_traceparent_per_request_discovery_is_placed_by_order_and_measured() {
    per_request_discovery(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_traceparent_evidence_decides_under_cpu_contention() {
    per_request_discovery(3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn start_up_discovery_is_a_setup_trace_apart_from_the_first_request() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let system = System::start(false, true).await;
    system.host.start_up().await;
    system.run_requests(1).await;
    let (hops, store, _dir) = system.grouped_then_stopped(3 + 5).await;
    let kinds: HashMap<String, String> = store
        .traces()
        .await
        .unwrap()
        .into_iter()
        .map(|t| (t.id, t.kind))
        .collect();
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    let trace_of = |wanted: &str| -> Vec<&str> {
        hops.iter()
            .filter(|h| tag(h) == wanted)
            .map(|h| h.trace_id.as_deref().unwrap())
            .collect()
    };
    let setup = trace_of("setup");
    assert_eq!(setup.len(), 3);
    assert!(setup.iter().all(|t| *t == setup[0]));
    assert_eq!(kinds[setup[0]], "setup");
    let request = trace_of("req-0");
    assert_eq!(request.len(), 5);
    assert!(request.iter().all(|t| *t == request[0] && *t != setup[0]));
    assert_eq!(kinds[request[0]], "request");
    assert_eq!(score_requests(&hops), (5, 5, 0));
}
