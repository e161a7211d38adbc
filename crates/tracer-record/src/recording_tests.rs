//! Tests of `Recording` over a real SQLite file: a hop recorded through its sink is a row when
//! it finishes, the work beside it stops and its last step sees every hop, and a database that
//! refuses writes, or a writer held past the bound, is reported instead of waited on forever.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use super::*;
use tracer_wire::hop::{HopEnd, HopStart, HopState, Role, Transport};

fn start(id: &str) -> HopStart {
    HopStart {
        id: id.into(),
        route: "model".into(),
        role: Role::Model,
        transport: Transport::Http,
        peer: "127.0.0.1:1".into(),
        method: "POST".into(),
        path: "/api/chat".into(),
        url: "http://127.0.0.1:2/api/chat".into(),
        request_headers: Vec::new(),
        started_unix_ns: 1,
        run_id: None,
    }
}

fn complete(id: &str) -> HopEnd {
    HopEnd {
        id: id.into(),
        state: Some(HopState::Complete),
        status: Some(200),
        ..HopEnd::default()
    }
}

/// A last step that counts the hops in the database when it is taken, and work beside that
/// says whether it was asked to stop.
fn counting(hops_seen: &'static AtomicI64, stopped: &'static AtomicBool) -> Beside {
    Beside::then_last_step("counting the hops", move |store, stop| async move {
        stop.await;
        stopped.store(true, Ordering::SeqCst);
        LastStep::new(async move {
            hops_seen.store(store.hop_count().await?, Ordering::SeqCst);
            Ok(())
        })
    })
}

/// Finishes `recording`, failing the test (instead of hanging it) if the finish never ends.
async fn finished(recording: Recording, finish: Finish) -> Finished {
    tokio::time::timeout(Duration::from_secs(20), recording.finish(finish))
        .await
        .expect("the recording finished")
}

#[tokio::test]
async fn a_hop_recorded_through_the_sink_is_a_row_when_it_finishes() {
    static SEEN: AtomicI64 = AtomicI64::new(-1);
    static STOPPED: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let recording = Recording::start(store.clone(), Some("run1".into()))
        .unwrap()
        .beside(counting(&SEEN, &STOPPED));
    let sink = recording.sink();
    assert!(sink.start(start("a")));
    sink.end(complete("a"));
    drop(sink);
    let finished = finished(recording, Finish::until_drained()).await;
    let report = finished.writer.expect("the writer reports");
    assert_eq!(report.hops_written, 1);
    assert_eq!(report.journal_left, None);
    assert!(finished.failed.is_empty(), "{:?}", finished.failed);
    assert!(
        STOPPED.load(Ordering::SeqCst),
        "the work beside was stopped"
    );
    assert_eq!(SEEN.load(Ordering::SeqCst), 1, "the last step saw the row");
    let hop = store.hop("a").await.unwrap();
    assert_eq!(hop.state, HopState::Complete);
    assert_eq!(hop.start.run_id.as_deref(), Some("run1"), "the run's id");
    let journals = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().contains("journal")
        })
        .count();
    assert_eq!(journals, 0, "the emptied journal is removed");
}

#[tokio::test]
async fn a_failed_last_step_is_reported_in_its_own_words_and_the_next_is_still_taken() {
    static SEEN: AtomicI64 = AtomicI64::new(-1);
    static STOPPED: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let failing =
        Beside::then_last_step("grouping the last hops into traces", |_, stop| async move {
            stop.await;
            LastStep::new(async { Err(StoreError::Malformed("a test's fault".into())) })
        });
    let recording = Recording::start(store, None)
        .unwrap()
        .beside(failing)
        .beside(counting(&SEEN, &STOPPED));
    let finished = finished(recording, Finish::until_drained()).await;
    assert_eq!(finished.writer.unwrap().hops_written, 0);
    let lines: Vec<String> = finished.failed.iter().map(ToString::to_string).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("grouping the last hops into traces: ")
            && lines[0].contains("a test's fault"),
        "{}",
        lines[0]
    );
    assert_eq!(SEEN.load(Ordering::SeqCst), 0, "the next step was taken");
}

#[tokio::test]
async fn a_writer_held_past_the_bound_is_reported_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let recording = Recording::start(store, None).unwrap();
    // A pump that has not let go of its sink keeps the writer open.
    let held = recording.sink();
    assert!(held.start(start("a")));
    let began = Instant::now();
    let finished = finished(recording, Finish::within(Duration::from_millis(300))).await;
    assert!(
        matches!(finished.writer, Err(WriterLost::TimedOut(bound)) if bound == Duration::from_millis(300)),
        "{:?}",
        finished.writer
    );
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    drop(held);
}

#[tokio::test]
async fn a_database_that_refuses_writes_is_reported_and_the_last_steps_are_not_taken() {
    static SEEN: AtomicI64 = AtomicI64::new(-1);
    static STOPPED: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let store = Store::open(&path).await.unwrap();
    // Another process holds the write lock past the writer's last try.
    let url = format!("sqlite://{}", path.display());
    let mut other = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    sqlx::query("begin exclusive")
        .execute(&mut other)
        .await
        .unwrap();
    let recording = Recording::start(store, None)
        .unwrap()
        .beside(counting(&SEEN, &STOPPED));
    let sink = recording.sink();
    assert!(sink.start(start("a")));
    sink.end(complete("a"));
    drop(sink);
    let finished = finished(recording, Finish::until_drained()).await;
    let report = finished.writer.expect("the writer reports");
    let journal = report.journal_left.clone().expect("the journal is left");
    assert!(journal.exists(), "{}", journal.display());
    assert_eq!(report.hops_left_in_journal, 1);
    assert!(
        report
            .summary()
            .contains("the database is not taking writes"),
        "{}",
        report.summary()
    );
    assert!(
        STOPPED.load(Ordering::SeqCst),
        "the work beside was stopped"
    );
    assert_eq!(
        SEEN.load(Ordering::SeqCst),
        -1,
        "no last step on a refused database"
    );
    sqlx::query("commit").execute(&mut other).await.unwrap();
}
