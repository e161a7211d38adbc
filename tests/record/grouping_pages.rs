//! Live grouping reads what arrived since its last pass a page at a time and takes it in start
//! order a chunk at a time: a pass over more hops than a page and a chunk hold groups every one
//! of them as a rebuild does.

use tracer_live::live_group::LiveGrouping;
use tracer_store::Store;
use tracer_wire::hop::Role;

use super::correlate::{asks, call, chat, end, record, start, success};
use super::grouping_evidence::rebuild_decides_the_same;

/// One user request through a host with no agent route: the model asks for a tool, the host
/// calls it, the model answers. `swapped`: the call's row is stored before the row of the
/// answer that asked for it (it started later), as when the writer takes them in that order.
async fn request(store: &Store, n: usize, swapped: bool) {
    let at = i64::try_from(n).unwrap() * 100;
    let item = format!("item {n}");
    let text = format!("Add {item} to my notes");
    let (asked, called, answered) = (format!("m{n}a"), format!("t{n}"), format!("m{n}b"));
    let asking = || {
        record(
            store,
            start(&asked, Role::Model, "/api/chat", at),
            Some(end(&asked, at + 10, chat(&text), asks(&item))),
        )
    };
    let calling = || {
        record(
            store,
            start(&called, Role::Mcp, "/mcp", at + 20),
            Some(end(&called, at + 30, call(&item), success())),
        )
    };
    if swapped {
        calling().await;
        asking().await;
    } else {
        asking().await;
        calling().await;
    }
    record(
        store,
        start(&answered, Role::Model, "/api/chat", at + 40),
        Some(end(&answered, at + 50, chat(&text), asks(&item))),
    )
    .await;
}

#[tokio::test]
async fn a_pass_over_more_than_a_chunk_of_hops_groups_each_as_a_rebuild_does() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    request(&store, 0, false).await;
    let mut live = LiveGrouping::new();
    let first = live.pass(&store).await.unwrap();
    assert_eq!(first.assigned, 3, "{first:?}");

    // 2,103 hops arrive before the next pass: many pages of rows, and more than one chunk.
    // Every other request of the first 600 (well inside the first chunk) stored out of start
    // order: a chunk is taken in start order, as one statement ordered by start would give it.
    let requests = 701;
    for n in 1..=requests {
        request(&store, n, n <= 600 && n % 2 == 1).await;
    }
    let second = live.pass(&store).await.unwrap();
    assert_eq!(second.assigned, 3 * requests, "{second:?}");
    assert_eq!(second.waiting, 0, "{second:?}");
    let hops = store.all_hops().await.unwrap();
    assert!(hops.iter().all(|hop| hop.trace_id.is_some()));
    // Each request's three hops share one trace, and no two requests share one.
    let mut traces = std::collections::HashSet::new();
    for hop in hops.iter().filter(|hop| hop.start.id.ends_with('a')) {
        let n = hop.start.id.trim_start_matches('0').trim_start_matches('m');
        let n = n.trim_end_matches('a');
        let others: Vec<_> = hops
            .iter()
            .filter(|other| {
                let id = other.start.id.trim_start_matches('0');
                id == format!("t{n}") || id == format!("m{n}b")
            })
            .collect();
        assert_eq!(others.len(), 2, "request {n}");
        assert!(
            others.iter().all(|other| other.trace_id == hop.trace_id),
            "request {n}"
        );
        assert!(
            traces.insert(hop.trace_id.clone()),
            "request {n} has a trace of its own"
        );
    }
    assert_eq!(traces.len(), requests + 1);
    rebuild_decides_the_same(&store).await;
}
