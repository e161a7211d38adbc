//! The grouping driver over a real SQLite store in a temp dir: assigns, is idempotent, waits for
//! hops in flight, and a rebuild gives the same traces.

use serde_json::json;
use tracer_live::correlate::{GroupScope, correlate};
use tracer_store::{Store, hops};
use tracer_trace::GroupOptions;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, HopState, Role, Transport};

pub(crate) const MS: i64 = 1_000_000;
pub(crate) const BASE: i64 = 1_800_000_000_000_000_000;

pub(crate) fn start(id: &str, role: Role, path: &str, at_ms: i64) -> HopStart {
    HopStart {
        id: format!("{id:0>32}"),
        route: role.as_str().into(),
        role,
        transport: Transport::Http,
        peer: "127.0.0.1:40001".into(),
        method: "POST".into(),
        path: path.into(),
        url: format!("http://127.0.0.1:9{path}"),
        request_headers: vec![Header::new("content-type", "application/json")],
        started_unix_ns: BASE + at_ms * MS,
        run_id: None,
    }
}

pub(crate) fn end(
    id: &str,
    at_ms: i64,
    request: serde_json::Value,
    response: serde_json::Value,
) -> HopEnd {
    HopEnd {
        id: format!("{id:0>32}"),
        state: Some(HopState::Complete),
        status: Some(200),
        response_headers: vec![Header::new("content-type", "application/json")],
        request_body: BodyCapture::whole(request.to_string().into_bytes()),
        response_body: BodyCapture::whole(response.to_string().into_bytes()),
        response_ended_unix_ns: Some(BASE + at_ms * MS),
        ..HopEnd::default()
    }
}

pub(crate) async fn record(store: &Store, start: HopStart, end: Option<HopEnd>) {
    let mut conn = store.pool().acquire().await.expect("connection");
    hops::insert_start(&mut conn, &start).await.expect("start");
    if let Some(end) = end {
        assert!(hops::apply_end(&mut conn, &end).await.expect("end"));
    }
}

/// The hop's request body has been read whole at `at_ms`; its answer has not come yet.
pub(crate) async fn request_read(store: &Store, id: &str, at_ms: i64, body: serde_json::Value) {
    let done = tracer_wire::hop::RequestDone {
        id: format!("{id:0>32}"),
        request_body: BodyCapture::whole(body.to_string().into_bytes()),
        request_ended_unix_ns: BASE + at_ms * MS,
    };
    let mut conn = store.pool().acquire().await.expect("connection");
    hops::apply_request_done(&mut conn, &done)
        .await
        .expect("request");
}

pub(crate) fn chat(text: &str) -> serde_json::Value {
    json!({"model": "qwen2.5:7b", "messages": [{"role": "user", "content": text}], "stream": false})
}

pub(crate) fn asks(item: &str) -> serde_json::Value {
    json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "append", "arguments": {"content": item}}}]}, "done": true})
}

pub(crate) fn call(item: &str) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "append", "arguments": {"content": item}}})
}

pub(crate) fn success() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Success"}]}})
}

#[tokio::test]
async fn correlate_assigns_once_waits_for_in_flight_hops_and_rebuilds_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.db")).await.expect("store");
    // Two users at once through a host with no agent route and no traceparent.
    record(
        &store,
        start("a1", Role::Model, "/api/chat", 0),
        Some(end("a1", 100, chat("Add milk"), asks("milk"))),
    )
    .await;
    record(
        &store,
        start("b1", Role::Model, "/api/chat", 10),
        Some(end("b1", 120, chat("Add eggs"), asks("eggs"))),
    )
    .await;
    record(
        &store,
        start("b2", Role::Mcp, "/mcp", 130),
        Some(end("b2", 135, call("eggs"), success())),
    )
    .await;
    record(
        &store,
        start("a2", Role::Mcp, "/mcp", 140),
        Some(end("a2", 145, call("milk"), success())),
    )
    .await;
    record(&store, start("a3", Role::Model, "/api/chat", 150), None).await;

    let report = correlate(&store, GroupOptions::default(), GroupScope::Unassigned)
        .await
        .expect("correlate");
    assert_eq!(
        (report.assigned, report.kept, report.waiting, report.traces),
        (4, 0, 1, 2)
    );
    let trace_of = |hops: &[tracer_store::hops::StoredHop], id: &str| {
        hops.iter()
            .find(|h| h.start.id.ends_with(id))
            .and_then(|h| h.trace_id.clone())
    };
    let hops = store.all_hops().await.expect("hops");
    let milk = trace_of(&hops, "a1").expect("a1 has a trace");
    let eggs = trace_of(&hops, "b1").expect("b1 has a trace");
    assert_ne!(milk, eggs);
    assert_eq!(trace_of(&hops, "a2").as_ref(), Some(&milk));
    assert_eq!(trace_of(&hops, "b2").as_ref(), Some(&eggs));
    assert_eq!(trace_of(&hops, "a3"), None, "in flight: left for later");
    let milk_trace = store.trace(&milk[..31]).await.expect("trace by prefix");
    assert_eq!(milk_trace.title.as_deref(), Some("Add milk"));
    assert_eq!(store.trace_hops(&milk).await.expect("hops").len(), 2);
    assert!(store.trace("ffff").await.is_err());
    let titles: Vec<Option<String>> = store
        .traces()
        .await
        .expect("traces")
        .into_iter()
        .map(|t| t.title)
        .collect();
    assert_eq!(
        titles,
        [Some("Add eggs".to_string()), Some("Add milk".to_string())]
    );

    // The in-flight hop ends; the next run places only it, and keeps the rest.
    let mut conn = store.pool().acquire().await.expect("connection");
    hops::apply_end(
        &mut conn,
        &end(
            "a3",
            200,
            chat("Add milk"),
            json!({"message": {"role": "assistant", "content": "Done."}, "done": true}),
        ),
    )
    .await
    .expect("end");
    drop(conn);
    let again = correlate(&store, GroupOptions::default(), GroupScope::Unassigned)
        .await
        .expect("again");
    assert_eq!((again.assigned, again.kept, again.waiting), (1, 4, 0));
    let hops = store.all_hops().await.expect("hops");
    assert_eq!(trace_of(&hops, "a3").as_ref(), Some(&milk));

    let idle = correlate(&store, GroupOptions::default(), GroupScope::Unassigned)
        .await
        .expect("idle");
    assert_eq!(
        idle,
        Default::default(),
        "nothing left to assign: nothing read"
    );

    let rebuilt = correlate(&store, GroupOptions::default(), GroupScope::Rebuild)
        .await
        .expect("rebuild");
    assert_eq!((rebuilt.assigned, rebuilt.kept, rebuilt.traces), (5, 0, 2));
    let after: Vec<Option<String>> = store
        .all_hops()
        .await
        .expect("hops")
        .into_iter()
        .map(|h| h.trace_id)
        .collect();
    let before: Vec<Option<String>> = hops.into_iter().map(|h| h.trace_id).collect();
    assert_eq!(after, before);
}

#[tokio::test]
async fn live_grouping_reads_only_what_is_new_and_learns_answers_that_come_later() {
    use tracer_live::live_group::LiveGrouping;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.db")).await.expect("store");
    // Two users at once; both model calls are still answering when the first pass runs.
    for (id, at, text) in [("a1", 0, "Add milk"), ("b1", 10, "Add eggs")] {
        record(&store, start(id, Role::Model, "/api/chat", at), None).await;
        request_read(&store, id, at + 1, chat(text)).await;
    }
    let mut live = LiveGrouping::new();
    let first = live.pass(&store).await.expect("first pass");
    assert_eq!((first.assigned, first.kept, first.traces), (2, 0, 2));

    // The answers come (each asks for a tool), then the two tool calls, eggs first.
    let mut conn = store.pool().acquire().await.expect("connection");
    hops::apply_end(&mut conn, &end("a1", 100, chat("Add milk"), asks("milk")))
        .await
        .expect("end");
    hops::apply_end(&mut conn, &end("b1", 120, chat("Add eggs"), asks("eggs")))
        .await
        .expect("end");
    drop(conn);
    record(
        &store,
        start("b2", Role::Mcp, "/mcp", 130),
        Some(end("b2", 135, call("eggs"), success())),
    )
    .await;
    record(
        &store,
        start("a2", Role::Mcp, "/mcp", 140),
        Some(end("a2", 145, call("milk"), success())),
    )
    .await;
    let second = live.pass(&store).await.expect("second pass");
    assert_eq!(
        (second.assigned, second.kept),
        (2, 0),
        "only the new hops are grouped; nothing already grouped is read again as new"
    );
    let hops = store.all_hops().await.expect("hops");
    let trace_of = |id: &str| {
        hops.iter()
            .find(|h| h.start.id.ends_with(id))
            .and_then(|h| h.trace_id.clone())
            .expect("grouped")
    };
    // Each tool call joined the model call that asked for it: learned from answers that
    // arrived after those model calls were grouped.
    assert_eq!(trace_of("a2"), trace_of("a1"));
    assert_eq!(trace_of("b2"), trace_of("b1"));
    assert_ne!(trace_of("a1"), trace_of("b1"));
    let milk = store.trace(&trace_of("a1")).await.expect("trace");
    assert_eq!(
        milk.ended_unix_ns,
        Some(BASE + 145 * MS),
        "its end follows its hops"
    );

    let idle = live.pass(&store).await.expect("idle pass");
    assert_eq!(
        idle,
        Default::default(),
        "nothing new: nothing read or written"
    );

    // A full replay of the same hops decides the same.
    let rebuilt = correlate(&store, GroupOptions::default(), GroupScope::Rebuild)
        .await
        .expect("rebuild");
    assert_eq!(rebuilt.assigned, 4);
    let after: Vec<Option<String>> = store
        .all_hops()
        .await
        .expect("hops")
        .into_iter()
        .map(|h| h.trace_id)
        .collect();
    let before: Vec<Option<String>> = hops.iter().map(|h| h.trace_id.clone()).collect();
    assert_eq!(after, before);
}

#[tokio::test]
async fn live_grouping_waits_for_a_request_still_arriving_and_groups_it_once_it_has() {
    use tracer_live::live_group::LiveGrouping;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.db")).await.expect("store");
    record(
        &store,
        start("a1", Role::Model, "/api/chat", 0),
        Some(end("a1", 100, chat("Add milk"), asks("milk"))),
    )
    .await;
    // A tool call whose request body is still arriving.
    record(&store, start("a2", Role::Mcp, "/mcp", 110), None).await;
    let mut live = LiveGrouping::new();
    let first = live.pass(&store).await.expect("first pass");
    assert_eq!((first.assigned, first.waiting), (1, 1));
    let second = live.pass(&store).await.expect("second pass");
    assert_eq!((second.assigned, second.waiting), (0, 1), "still arriving");

    request_read(&store, "a2", 111, call("milk")).await;
    let mut conn = store.pool().acquire().await.expect("connection");
    hops::apply_end(&mut conn, &end("a2", 115, call("milk"), success()))
        .await
        .expect("end");
    drop(conn);
    let third = live.pass(&store).await.expect("third pass");
    assert_eq!((third.assigned, third.waiting), (1, 0));
    let hops = store.all_hops().await.expect("hops");
    assert_eq!(
        hops[0].trace_id, hops[1].trace_id,
        "the call joined its model call"
    );
    assert!(hops[1].trace_id.is_some());
}

#[tokio::test]
async fn the_last_hops_are_grouped_by_the_live_grouper_without_reading_the_window_again() {
    use tracer_live::correlate::group_last_hops;
    use tracer_live::live_group::LiveGrouping;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.db")).await.expect("store");
    for (i, text) in ["Add milk", "Add eggs", "Add tea"].iter().enumerate() {
        let at = i64::try_from(i).unwrap() * 1_000;
        let id = format!("m{i}");
        record(
            &store,
            start(&id, Role::Model, "/api/chat", at),
            Some(end(&id, at + 100, chat(text), success())),
        )
        .await;
    }
    let mut live = LiveGrouping::new();
    assert_eq!(live.pass(&store).await.expect("pass").assigned, 3);
    // Written after the live grouper's last pass, as the writer's last batch is at a stop.
    record(
        &store,
        start("m3", Role::Model, "/api/chat", 3_000),
        Some(end("m3", 3_100, chat("Add jam"), success())),
    )
    .await;
    let last = group_last_hops(&store, Some(live)).await.expect("last");
    assert_eq!(
        (last.assigned, last.kept),
        (1, 0),
        "only the hop written since is read"
    );
    assert!(
        store
            .all_hops()
            .await
            .expect("hops")
            .iter()
            .all(|h| h.trace_id.is_some())
    );

    // Without a live grouper (its task failed) the window is replayed, as before.
    record(
        &store,
        start("m4", Role::Model, "/api/chat", 4_000),
        Some(end("m4", 4_100, chat("Add rice"), success())),
    )
    .await;
    let replayed = group_last_hops(&store, None).await.expect("replay");
    assert_eq!(replayed.assigned, 1);
    assert!(replayed.kept >= 4, "the window read again: {replayed:?}");
}
