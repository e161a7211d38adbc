//! The live grouper's rest between passes: cut short once nothing new is stored (a load that
//! stopped), never while hops keep coming.

use std::time::{Duration, Instant};

use super::*;
use tracer_store::writer::Recorder;
use tracer_wire::hop::{HopSink, HopStart, Role, Transport};

fn start(n: u32) -> HopStart {
    HopStart {
        id: format!("{n:032x}"),
        route: "model".into(),
        role: Role::Model,
        transport: Transport::Http,
        peer: "127.0.0.1:1".into(),
        method: "POST".into(),
        path: "/v1/messages".into(),
        url: "http://127.0.0.1:2/v1/messages".into(),
        request_headers: Vec::new(),
        started_unix_ns: 1_700_000_000_000_000_000 + i64::from(n),
        run_id: None,
    }
}

#[tokio::test]
async fn a_long_rest_ends_once_nothing_new_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let began = Instant::now();
    rest_until_due_or_quiet(&store, Duration::from_millis(50), Duration::from_secs(30)).await;
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "a quiet store cut the 30 s rest short: {:?}",
        began.elapsed()
    );
}

#[tokio::test]
async fn a_rest_lasts_while_hops_keep_being_stored() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let feeding = tokio::spawn(async move {
        for n in 0..600 {
            assert!(recorder.start(start(n)));
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    // The first rows are in before the rest begins.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let began = Instant::now();
    // Looks 400 ms apart: only a stall that long would read as quiet.
    rest_until_due_or_quiet(
        &store,
        Duration::from_millis(400),
        Duration::from_millis(1200),
    )
    .await;
    assert!(
        began.elapsed() >= Duration::from_millis(1190),
        "hops kept coming, yet the rest ended after {:?}",
        began.elapsed()
    );
    feeding.await.unwrap();
    writer.await.unwrap();
}
