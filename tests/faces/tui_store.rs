//! The TUI and replay over a real database in a temp dir: effects poll and group new hops,
//! read facts and traces, export a hop log; `tracer replay --plain` from the database and from an
//! exported file; `tracer tui` and `tracer replay` refuse when stdout is not a terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::trace_hops as support;

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use predicates::str::contains;
use support::buy;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tracer::tui::action::{Action, Effect};
use tracer::tui::effects::Effects;
use tracer_export::hop_log::HopLog;
use tracer_store::{Store, hops};

async fn seed(path: &Path) -> String {
    let store = Store::open(path).await.unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    let milk = buy("a", "buy milk", 0);
    for hop in &milk {
        hops::insert_start(&mut conn, &hop.start).await.unwrap();
        assert!(
            hops::apply_end(&mut conn, hop.end.as_ref().unwrap())
                .await
                .unwrap()
        );
    }
    drop(conn);
    store.close().await;
    milk[0].start.id.clone()
}

async fn next(actions: &mut UnboundedReceiver<Action>) -> Action {
    tokio::time::timeout(Duration::from_secs(10), actions.recv())
        .await
        .expect("an effect answers within 10 s")
        .expect("the channel is open")
}

#[tokio::test]
async fn effects_group_read_and_export_over_a_real_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let milk_id = seed(&path).await;
    let store = Store::open(&path).await.unwrap();
    let (sender, mut actions) = unbounded_channel();
    let effects = Effects::new(Some(store.clone()), dir.path().to_path_buf(), sender);

    // The first poll groups the ungrouped hops and reads the list.
    effects.spawn(Effect::Poll { last: None });
    let Action::TracesLoaded { rows, token, .. } = next(&mut actions).await else {
        panic!("expected the list");
    };
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].id, milk_id);
    assert_eq!(rows[0].title.as_deref(), Some("Add buy milk to my notes"));
    assert_eq!(token.hops, 5);
    // Nothing new: the next poll says so without reading the list.
    effects.spawn(Effect::Poll { last: Some(token) });
    assert!(matches!(next(&mut actions).await, Action::PollDone { .. }));

    effects.spawn(Effect::LoadFacts(vec![milk_id.clone()]));
    let Action::FactsLoaded(facts) = next(&mut actions).await else {
        panic!("expected facts");
    };
    assert_eq!(facts[0].1.summary.hops, 5);
    assert_eq!(facts[0].1.tools(), ["append"]);

    effects.spawn(Effect::LoadTrace(milk_id[..8].to_string()));
    let Action::TraceLoaded { trace_id, hops, .. } = next(&mut actions).await else {
        panic!("expected the trace");
    };
    assert_eq!((trace_id.as_str(), hops.len()), (milk_id.as_str(), 5));

    effects.spawn(Effect::Export(milk_id.clone()));
    let Action::Exported { path: exported } = next(&mut actions).await else {
        panic!("expected an export");
    };
    let log = HopLog::from_json(&std::fs::read(&exported).unwrap()).unwrap();
    assert_eq!(log.trace_id(), milk_id);
    assert!(exported.ends_with(&format!("trace-{milk_id}.json")));

    effects.spawn(Effect::LoadTrace("ffff".into()));
    let Action::Failed(message) = next(&mut actions).await else {
        panic!("expected a failure");
    };
    assert!(
        message.contains("no trace ffff in the database"),
        "{message}"
    );
    store.close().await;
}

fn tracer(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
    command
        .env_remove("TRACER_DB")
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .arg("--db")
        .arg(db);
    command
}

#[tokio::test]
async fn replay_plain_from_the_database_and_from_an_exported_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let milk_id = seed(&path).await;
    {
        let store = Store::open(&path).await.unwrap();
        let (sender, mut actions) = unbounded_channel();
        Effects::new(Some(store.clone()), dir.path().to_path_buf(), sender)
            .spawn(Effect::Poll { last: None });
        next(&mut actions).await;
        let log = HopLog::from_store(&store, &milk_id).await.unwrap();
        std::fs::write(dir.path().join("milk.json"), log.to_json_pretty()).unwrap();
        store.close().await;
    }
    let output = tracer(&path)
        .args(["replay", &milk_id[..10], "--plain"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(output).unwrap();
    assert!(
        text.contains("── step 10/10 ──\n10 agent → you  200  reply:"),
        "{text}"
    );
    insta::assert_snapshot!("replay_plain_buy_milk", text);

    // The exported file replays the same steps with no database at all.
    let nowhere = dir.path().join("none/never.db");
    let from_file = tracer(&nowhere)
        .args([
            "replay",
            dir.path().join("milk.json").to_str().unwrap(),
            "--plain",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(from_file).unwrap(), text);
    assert!(!nowhere.exists());

    tracer(&path)
        .args(["replay", "ffff", "--plain"])
        .assert()
        .failure()
        .stderr(contains("tracer: no trace ffff in the database"));
}

#[test]
fn full_screen_commands_refuse_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    tracer(&db)
        .arg("tui")
        .assert()
        .failure()
        .stderr(contains("tracer tui needs a terminal"));
    tracer(&db)
        .args(["replay", "abc"])
        .assert()
        .failure()
        .stderr(contains("tracer replay needs a terminal"))
        .stderr(contains("--plain"));
    assert!(!db.exists(), "refused before opening the database");
}
