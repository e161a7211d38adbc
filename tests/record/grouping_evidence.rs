//! Live grouping decides by evidence, not by when a pass ran: hops recorded in the orders a
//! loaded proxy stores them (an agent's body after its first model call, a tool call before the
//! end of the model answer that asked for it) are held until the evidence is stored, then
//! placed as a replay of the finished hops places them; a hop that owes evidence and never
//! brings it holds others only within the bound.

use serde_json::json;
use tracer_live::correlate::{GroupScope, correlate};
use tracer_live::live_group::LiveGrouping;
use tracer_store::Store;
use tracer_store::hops::StoredHop;
use tracer_trace::GroupOptions;
use tracer_wire::hop::Role;

use super::correlate::{BASE, MS, asks, call, chat, end, record, request_read, start, success};

fn agent(text: &str) -> serde_json::Value {
    json!({ "message": text })
}

fn reply() -> serde_json::Value {
    json!({"reply": "Done.", "tool_calls": []})
}

fn trace_of(hops: &[StoredHop], id: &str) -> Option<String> {
    hops.iter()
        .find(|h| h.start.id.ends_with(id))
        .and_then(|h| h.trace_id.clone())
}

/// Two user requests at once, both agent hops still answering.
async fn two_users(store: &Store) {
    record(store, start("ua", Role::Agent, "/agent", 0), None).await;
    request_read(store, "ua", 1, agent("Add milk to my notes")).await;
    record(store, start("ub", Role::Agent, "/agent", 5), None).await;
    request_read(store, "ub", 6, agent("Add eggs to my notes")).await;
}

/// The milk request's model call, stored with its request and no answer yet.
async fn milk_call_unanswered(store: &Store) {
    record(store, start("ma", Role::Model, "/api/chat", 10), None).await;
    request_read(store, "ma", 11, chat("Add milk to my notes")).await;
}

/// The tool call the milk answer asks for, stored whole.
async fn milk_tool_call(store: &Store) {
    record(
        store,
        start("ta", Role::Mcp, "/mcp", 50),
        Some(end("ta", 55, call("milk"), success())),
    )
    .await;
}

pub(crate) async fn rebuild_decides_the_same(store: &Store) {
    let live: Vec<Option<String>> = store
        .all_hops()
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.trace_id)
        .collect();
    correlate(store, GroupOptions::default(), GroupScope::Rebuild)
        .await
        .unwrap();
    let rebuilt: Vec<Option<String>> = store
        .all_hops()
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.trace_id)
        .collect();
    assert_eq!(live, rebuilt, "a rebuild decides as live grouping did");
}

#[tokio::test]
async fn a_model_request_stored_before_its_agents_body_waits_for_the_users_text() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    // The milk request's agent hop is stored, its body not yet; the eggs request's is.
    record(&store, start("ua", Role::Agent, "/agent", 0), None).await;
    record(&store, start("ub", Role::Agent, "/agent", 5), None).await;
    request_read(&store, "ub", 6, agent("Add eggs to my notes")).await;
    record(
        &store,
        start("ma", Role::Model, "/api/chat", 10),
        Some(end("ma", 60, chat("Add milk to my notes"), asks("milk"))),
    )
    .await;
    let mut live = LiveGrouping::new();
    let first = live.pass(&store).await.unwrap();
    assert_eq!(
        (first.assigned, first.waiting),
        (0, 3),
        "nothing decided before the milk request's text can be read"
    );

    request_read(&store, "ua", 2, agent("Add milk to my notes")).await;
    let second = live.pass(&store).await.unwrap();
    assert_eq!((second.assigned, second.waiting), (3, 0));
    let hops = store.all_hops().await.unwrap();
    assert_eq!(trace_of(&hops, "ma"), trace_of(&hops, "ua"));
    assert_ne!(trace_of(&hops, "ua"), trace_of(&hops, "ub"));
    let milk = store.trace(&trace_of(&hops, "ua").unwrap()).await.unwrap();
    assert_eq!(milk.title.as_deref(), Some("Add milk to my notes"));
    rebuild_decides_the_same(&store).await;
}

#[tokio::test]
async fn a_tool_call_stored_before_the_answer_that_asked_for_it_waits_for_that_answer() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    two_users(&store).await;
    // The milk model call is stored with its request, its answer not yet; the eggs one whole.
    milk_call_unanswered(&store).await;
    record(
        &store,
        start("mb", Role::Model, "/api/chat", 12),
        Some(end("mb", 40, chat("Add eggs to my notes"), asks("eggs"))),
    )
    .await;
    // The host got the milk answer and called the tool before the proxy stored that answer.
    milk_tool_call(&store).await;
    let mut live = LiveGrouping::new();
    let first = live.pass(&store).await.unwrap();
    let hops = store.all_hops().await.unwrap();
    assert_eq!(
        trace_of(&hops, "ta"),
        None,
        "held: its evidence is on its way"
    );
    assert_eq!(first.waiting, 1);
    assert_eq!(trace_of(&hops, "mb"), trace_of(&hops, "ub"));

    let mut conn = store.pool().acquire().await.unwrap();
    tracer_store::hops::apply_end(
        &mut conn,
        &end("ma", 45, chat("Add milk to my notes"), asks("milk")),
    )
    .await
    .unwrap();
    drop(conn);
    let second = live.pass(&store).await.unwrap();
    assert_eq!((second.assigned, second.waiting), (1, 0));
    let hops = store.all_hops().await.unwrap();
    assert_eq!(
        trace_of(&hops, "ta"),
        trace_of(&hops, "ua"),
        "placed by the call"
    );
    for (id, text) in [
        ("ua", "Add milk to my notes"),
        ("ub", "Add eggs to my notes"),
    ] {
        let mut conn = store.pool().acquire().await.unwrap();
        let done = end(id, 70, agent(text), reply());
        tracer_store::hops::apply_end(&mut conn, &done)
            .await
            .unwrap();
    }
    rebuild_decides_the_same(&store).await;
}

#[tokio::test]
async fn evidence_that_never_comes_holds_later_hops_only_within_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    two_users(&store).await;
    // A model call that will never end (its proxy was killed), then a tool call.
    milk_call_unanswered(&store).await;
    milk_tool_call(&store).await;
    let options = GroupOptions::default();
    let mut live = LiveGrouping::new();
    let at = |ms: i64| BASE + ms * MS;
    let first = live.pass_at(&store, at(1_000)).await.unwrap();
    assert_eq!(first.waiting, 1, "within the bound: held");
    let idle = at(10) + options.idle_hold_ns + MS;
    let second = live.pass_at(&store, idle).await.unwrap();
    assert_eq!(
        (second.assigned, second.waiting),
        (1, 0),
        "past the wall-time bound: decided with what there is"
    );

    // The record's own clock: a hop that started the bound after the stuck call releases it.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    two_users(&store).await;
    milk_call_unanswered(&store).await;
    milk_tool_call(&store).await;
    let mut live = LiveGrouping::new();
    assert_eq!(live.pass_at(&store, at(100)).await.unwrap().waiting, 1);
    let later = 10 + options.hold_ns / MS + 1;
    record(
        &store,
        start("ux", Role::Agent, "/agent", later),
        Some(end("ux", later + 5, agent("Add tea"), reply())),
    )
    .await;
    let report = live.pass_at(&store, at(later + 10)).await.unwrap();
    assert_eq!((report.assigned, report.waiting), (2, 0));
}
