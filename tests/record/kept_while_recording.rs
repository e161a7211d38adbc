//! What a running `tracer proxy` keeps as it records a session whose requests are large: each
//! request's reading soon after it ends, and the trace's listing once the session is quiet, so
//! the first `tracer ls` after it reads kept rows and lists what reading every body lists.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::long_session::{Agent, count, scripted_model, sql, tracer};
use crate::store_faults::process::ProxyProcess;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_proxy_keeps_readings_and_the_listing_so_the_first_ls_reads_no_body() {
    const TURNS: usize = 30;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let answers = Arc::new(Mutex::new(VecDeque::new()));
    let upstream = scripted_model(answers.clone()).await;
    let proxy = ProxyProcess::start(&db, upstream).await;
    // Every request is above the size readers let go of (64 KiB).
    let mut agent = Agent::with_prompt(29, answers.clone(), 70_000);
    for turn in 0..TURNS {
        agent.turn(proxy.addr, turn, TURNS).await;
    }
    // The proxy keeps them by itself, before any reader opens the database.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let readings = count(&db, "select count(*) from hop_readings").await;
        let listings = count(&db, "select count(*) from trace_summaries").await;
        if readings == TURNS as i64 && listings == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after 60 s the proxy kept {readings} readings of {TURNS} and {listings} listings"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let exit = proxy.terminate().await;
    assert_eq!(exit.written, TURNS as u64, "{}", exit.line);

    // The first listing takes what the proxy kept; it is what reading every body gives.
    let kept: Value = serde_json::from_slice(&tracer(&db, &["ls", "--json"])).unwrap();
    assert_eq!(kept[0]["hop_count"], TURNS);
    sql(&db, "delete from trace_summaries").await;
    sql(&db, "delete from hop_readings").await;
    let read_again: Value = serde_json::from_slice(&tracer(&db, &["ls", "--json"])).unwrap();
    assert_eq!(kept, read_again);
}
