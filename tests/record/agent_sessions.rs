//! Real agents run back to back through one proxy (tests/fixtures/agents/sessions/, see the
//! README there): every run is a session of its own, with its start-up as a setup trace and its
//! request as another; separate runs never share a trace, whatever their text; `correlate
//! --rebuild` decides as the proxy did live, and live passes over the hops as they came decide
//! the same; every tool call is numbered after the model message that asked for it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tracer_export::hop_log::HopLog;
use tracer_live::correlate::{GroupScope, correlate};
use tracer_live::live_group::LiveGrouping;
use tracer_live::load::{Bodies, read_trace_hops};
use tracer_store::Store;
use tracer_trace::{Direction, GroupOptions, explain_trace};
use tracer_wire::hop::Role;

use crate::session_fixtures::{PackedHop, load, stored};

/// The runs of a recording: hops split where more than a second passed with nothing started.
fn runs(hops: &[PackedHop]) -> Vec<BTreeSet<String>> {
    let mut order: Vec<&PackedHop> = hops.iter().collect();
    order.sort_by_key(|h| h.start.started_unix_ns);
    let mut runs: Vec<BTreeSet<String>> = Vec::new();
    let mut last = i64::MIN;
    for hop in order {
        if hop.start.started_unix_ns.saturating_sub(last) > 1_000_000_000 {
            runs.push(BTreeSet::new());
        }
        last = hop.start.started_unix_ns.max(last);
        if let Some(run) = runs.last_mut() {
            run.insert(hop.start.id.clone());
        }
    }
    runs
}

/// hop id → trace id, as stored.
async fn assignments(store: &Store) -> BTreeMap<String, String> {
    let rows: Vec<(String, Option<String>)> = sqlx::query_as("select id, trace_id from hops")
        .fetch_all(store.pool())
        .await
        .expect("hops");
    rows.into_iter()
        .map(|(hop, trace)| (hop, trace.expect("every hop grouped")))
        .collect()
}

pub(crate) async fn rebuilt(name: &str) -> (tempfile::TempDir, Store, Vec<PackedHop>) {
    let hops = load(name);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = stored(dir.path(), &hops).await;
    correlate(&store, GroupOptions::default(), GroupScope::Rebuild)
        .await
        .expect("rebuild");
    (dir, store, hops)
}

/// Each run is one session (named by the host's id where it sends one) of two traces, its
/// start-up and its request; rebuild gives every hop the trace live grouping gave it.
async fn runs_are_sessions(name: &str, runs_expected: usize, host_header: &str) {
    let (_dir, store, hops) = rebuilt(name).await;
    let assigned = assignments(&store).await;
    let runs = runs(&hops);
    assert_eq!(runs.len(), runs_expected, "{name}: runs in the recording");
    for hop in &hops {
        assert_eq!(
            hop.live_trace.as_ref(),
            assigned.get(&hop.start.id),
            "{name}: rebuild puts hop {} {} {} where the proxy did live",
            hop.start.role.as_str(),
            hop.start.method,
            hop.start.path
        );
    }
    let run_of: HashMap<&String, usize> = runs
        .iter()
        .enumerate()
        .flat_map(|(index, run)| run.iter().map(move |hop| (hop, index)))
        .collect();
    let mut traces_of_run: Vec<BTreeSet<&String>> = vec![BTreeSet::new(); runs.len()];
    for (hop, trace) in &assigned {
        traces_of_run[run_of[hop]].insert(trace);
    }
    let all: BTreeSet<&String> = assigned.values().collect();
    let spread: usize = traces_of_run.iter().map(BTreeSet::len).sum();
    assert_eq!(spread, all.len(), "{name}: no trace holds hops of two runs");
    let sessions = store.sessions().await.expect("sessions");
    let session_of = store.trace_sessions().await.expect("trace sessions");
    assert_eq!(sessions.len(), runs_expected, "{name}: one session per run");
    let kinds = store.traces().await.expect("traces");
    for (index, traces) in traces_of_run.iter().enumerate() {
        let mut kinds_here: Vec<&str> = kinds
            .iter()
            .filter(|t| traces.contains(&t.id))
            .map(|t| t.kind.as_str())
            .collect();
        kinds_here.sort_unstable();
        assert_eq!(
            kinds_here,
            ["request", "setup"],
            "{name}: run {index} is its start-up and its request"
        );
        let of_run: BTreeSet<&String> = traces.iter().map(|t| &session_of[*t]).collect();
        assert_eq!(of_run.len(), 1, "{name}: run {index} is one session");
        let session = sessions
            .iter()
            .find(|s| of_run.contains(&s.id))
            .expect("its session");
        let host_ids: BTreeSet<&str> = hops
            .iter()
            .filter(|h| runs[index].contains(&h.start.id))
            .filter_map(|h| h.header(host_header))
            .collect();
        assert_eq!(host_ids.len(), 1, "{name}: run {index} names itself once");
        assert_eq!(
            session.host_session_id.as_deref(),
            host_ids.into_iter().next(),
            "{name}: run {index}'s session is named by the host's own id"
        );
    }
}

#[tokio::test]
async fn five_codex_runs_with_the_same_text_are_five_sessions() {
    runs_are_sessions("codex-5-runs.json", 5, "session-id").await;
}

#[tokio::test]
async fn two_claude_code_runs_are_two_sessions() {
    runs_are_sessions("claude-code-2-runs.json", 2, "x-claude-code-session-id").await;
}

/// Live passes over the hops as they came (each start, then each end, a pass after each)
/// decide what a rebuild of the finished hops decides.
async fn live_decides_as_rebuild(name: &str) {
    let (_dir, rebuilt_store, hops) = rebuilt(name).await;
    let expected = assignments(&rebuilt_store).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("live.db"))
        .await
        .expect("store");
    let mut events: Vec<(i64, bool, usize)> = Vec::new();
    for (index, hop) in hops.iter().enumerate() {
        events.push((hop.start.started_unix_ns, false, index));
        let end = hop
            .end
            .response_ended_unix_ns
            .or(hop.end.response_head_unix_ns)
            .unwrap_or(hop.start.started_unix_ns);
        events.push((end, true, index));
    }
    events.sort();
    let mut live = LiveGrouping::new();
    for (at, is_end, index) in events {
        {
            let mut conn = store.pool().acquire().await.expect("connection");
            if is_end {
                tracer_store::hops::apply_end(&mut conn, &hops[index].end)
                    .await
                    .expect("end");
            } else {
                tracer_store::hops::insert_start(&mut conn, &hops[index].start)
                    .await
                    .expect("start");
            }
        }
        live.pass_at(&store, at).await.expect("pass");
    }
    live.pass_at(&store, i64::MAX / 2).await.expect("last pass");
    assert_eq!(
        assignments(&store).await,
        expected,
        "{name}: live == rebuild"
    );
}

#[tokio::test]
async fn live_grouping_of_back_to_back_runs_decides_as_a_rebuild() {
    live_decides_as_rebuild("codex-5-runs.json").await;
    live_decides_as_rebuild("claude-code-2-runs.json").await;
}

/// In every request trace, the model's answer that asked for a tool is numbered before the
/// `tools/call` that ran it, though the host ran the tool before the stream ended.
async fn tool_calls_follow_the_answer_that_asked(name: &str) {
    let (_dir, store, _hops) = rebuilt(name).await;
    let mut checked = 0;
    for trace in store.traces().await.expect("traces") {
        let hops = read_trace_hops(&store, &trace.id, Bodies::Kept)
            .await
            .expect("hops");
        let messages = explain_trace(&hops);
        let number = |index: usize, direction: Direction| {
            messages
                .iter()
                .find(|m| m.hop_index == index && m.direction == direction)
                .map(|m| m.number)
        };
        for (index, hop) in hops.iter().enumerate() {
            let input = hop.trace_input();
            if hop.start.role != Role::Model || input.asked_calls.is_empty() {
                continue;
            }
            let asked = number(index, Direction::Response).expect("the answer is numbered");
            for (other, call) in hops.iter().enumerate() {
                if call.trace_input().mcp_method.as_deref() != Some("tools/call") {
                    continue;
                }
                let ran = number(other, Direction::Request).expect("the call is numbered");
                assert!(
                    asked < ran,
                    "{name}: trace {}: the answer asking for the tool is {asked}, the tools/call {ran}",
                    trace.id
                );
                assert!(
                    call.start.started_unix_ns
                        < hop
                            .end
                            .as_ref()
                            .and_then(|e| e.response_ended_unix_ns)
                            .unwrap_or(i64::MAX),
                    "{name}: the host ran the tool while the answer still streamed (what this test is about)"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "{name}: tool calls checked");
}

#[tokio::test]
async fn every_tool_call_is_numbered_after_the_answer_that_asked_for_it() {
    tool_calls_follow_the_answer_that_asked("codex-5-runs.json").await;
    tool_calls_follow_the_answer_that_asked("claude-code-2-runs.json").await;
}

/// The hop log names the trace's session by the host's own id, and import keeps it: export →
/// import → export gives the same bytes; a setup trace is titled "(start-up discovery)".
#[tokio::test]
async fn the_hop_log_carries_the_session_through_import() {
    let (_dir, store, hops) = rebuilt("claude-code-2-runs.json").await;
    let host_ids: BTreeSet<&str> = hops
        .iter()
        .filter_map(|h| h.header("x-claude-code-session-id"))
        .collect();
    let other = tempfile::tempdir().expect("tempdir");
    let copy = Store::open(&other.path().join("copy.db"))
        .await
        .expect("store");
    let validator = crate::hop_log::schema_validator();
    let mut setups = 0;
    for trace in store.traces().await.expect("traces") {
        let log = HopLog::from_store(&store, &trace.id).await.expect("log");
        let session = log.session().expect("a session");
        assert!(
            host_ids.contains(session.host_session_id.as_deref().unwrap_or("")),
            "{session:?}"
        );
        let text = log.to_json_pretty();
        crate::hop_log::assert_valid(&validator, &text);
        log.import(&copy).await.expect("import");
        correlate(&copy, GroupOptions::default(), GroupScope::Unassigned)
            .await
            .expect("group");
        let again = HopLog::from_store(&copy, &trace.id).await.expect("again");
        assert_eq!(again.to_json_pretty(), text, "export → import → export");
        if trace.kind == "setup" {
            setups += 1;
            assert_eq!(log.title(), Some("(start-up discovery)"), "one name");
            let stored = copy.traces().await.expect("traces");
            let row = stored.iter().find(|t| t.id == trace.id).expect("imported");
            assert_eq!(row.title, None, "the name is not stored as a title");
        }
    }
    assert!(setups > 0, "the runs' start-up traces were exported");
}

/// `tracer ls --sessions --json`: one entry per run, each with its setup and request traces.
#[tokio::test]
async fn ls_lists_the_sessions_with_their_traces() {
    let (dir, store, _hops) = rebuilt("codex-5-runs.json").await;
    store.close().await;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["ls", "--sessions", "--json", "--db"])
        .arg(dir.path().join("tracer.db"))
        .output()
        .expect("tracer ls");
    assert!(output.status.success(), "{output:?}");
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let sessions = listed.as_array().expect("an array");
    assert_eq!(sessions.len(), 5);
    for session in sessions {
        assert!(session["host_session_id"].is_string(), "{session}");
        let kinds: Vec<&str> = session["traces"]
            .as_array()
            .expect("traces")
            .iter()
            .map(|t| t["kind"].as_str().expect("kind"))
            .collect();
        assert_eq!(kinds, ["setup", "request"], "{session}");
        assert_eq!(session["traces"][1]["session"]["id"], session["id"]);
    }
}
