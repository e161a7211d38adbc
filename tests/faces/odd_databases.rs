//! Hostile or odd database files, built here with sqlx: a view or a trigger tracer never made is
//! refused before it can run (a recursive `traces` view would spin every reader forever); one
//! unreadable row is skipped and counted, not fatal; a hop id that is not text does not stop a
//! search; search folds non-ASCII capitals and reads `\u` escapes; `import` takes only trace ids
//! and the TUI's export never writes outside its folder; the TUI waits for a database to appear;
//! a reader pointed at an empty file leaves it empty.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use sqlx::Connection;
use tokio::sync::mpsc::unbounded_channel;
use tracer::tui::action::{Action, Effect};
use tracer::tui::effects::Effects;
use tracer_live::search::matching_hops;
use tracer_store::Store;

use crate::sample_db::{BUY_MILK, NEWEST, sample_db, sample_files};

fn tracer(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
    command
        .arg("--db")
        .arg(db)
        .env_remove("TRACER_DB")
        // Only a guard: a reader that spins forever fails here instead of hanging the run.
        .timeout(Duration::from_secs(120));
    command
}

async fn sql(db: &Path, statements: &[&str]) {
    let url = format!("sqlite://{}", db.display());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::raw_sql("pragma foreign_keys = off")
        .execute(&mut conn)
        .await
        .unwrap();
    for statement in statements {
        sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_string()))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    conn.close().await.unwrap();
}

async fn scalar(db: &Path, query: &str) -> String {
    let url = format!("sqlite://{}?mode=ro", db.display());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let value: String = sqlx::query_scalar(sqlx::AssertSqlSafe(query.to_string()))
        .fetch_one(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    value
}

fn failure(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr
}

#[tokio::test]
async fn a_recursive_view_in_place_of_traces_is_refused_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    sql(
        &db,
        &[
            "drop table traces",
            "create view traces as with recursive n(i) as (select 1 union all select i + 1 from n)
           select printf('%032x', i) as id, null as title, 'request' as kind,
                  i as started_unix_ns, null as ended_unix_ns, 'x' as created_by from n",
        ],
    )
    .await;
    for args in [
        &["ls"][..],
        &["show", "f0de"],
        &["export", "f0de"],
        &["correlate"],
    ] {
        let stderr = failure(tracer(&db).args(args));
        assert!(
            stderr.contains("is not a tracer database") && stderr.contains("view traces"),
            "{args:?}: {stderr}"
        );
    }
    // The read-only face refuses it the same way.
    let store = Store::open_read_only(&db).await.unwrap_err().to_string();
    assert!(store.contains("view traces"), "{store}");
}

#[tokio::test]
async fn a_virtual_table_or_a_generated_column_is_refused_too() {
    let dir = tempfile::tempdir().unwrap();
    let generated = sample_db(&dir.path().join("generated"));
    sql(
        &generated,
        &["alter table counters add column big blob
           generated always as (zeroblob(1000000000)) virtual"],
    )
    .await;
    let stderr = failure(tracer(&generated).arg("ls"));
    assert!(stderr.contains("generated column counters.big"), "{stderr}");
    let virtual_table = sample_db(&dir.path().join("virtual"));
    sql(
        &virtual_table,
        &["create virtual table notes_index using fts5(body)"],
    )
    .await;
    let stderr = failure(tracer(&virtual_table).arg("ls"));
    assert!(stderr.contains("virtual table notes_index"), "{stderr}");
}

#[tokio::test]
async fn a_trigger_in_the_file_never_runs_on_tracers_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    sql(
        &db,
        &[
            "create trigger planted after update on counters
           begin update hops set route = 'pwned'; end",
            "create trigger planted_insert after insert on counters
           begin update hops set route = 'pwned'; end",
        ],
    )
    .await;
    let stderr = failure(tracer(&db).arg("ls"));
    assert!(stderr.contains("trigger planted"), "{stderr}");
    failure(tracer(&db).args(["import", sample_files()[0].to_str().unwrap()]));
    assert_eq!(
        scalar(&db, "select count(*) || '' from hops where route = 'pwned'").await,
        "0",
        "the trigger never ran"
    );
}

#[tokio::test]
async fn one_unreadable_row_is_skipped_and_counted_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    sql(
        &db,
        &[
            &format!("update traces set started_unix_ns = 'soon' where id = '{BUY_MILK}'"),
            &format!(
                "update hops set request_headers = 'not json' where id =
                 (select id from hops where trace_id = '{NEWEST}' order by seq limit 1)"
            ),
        ],
    )
    .await;
    let output = tracer(&db).arg("ls").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains(&NEWEST[..8]),
        "the other traces are listed: {stdout}"
    );
    assert!(!stdout.contains(&BUY_MILK[..8]), "{stdout}");
    assert!(stderr.contains("could not be read and"), "{stderr}");

    let output = tracer(&db).args(["show", NEWEST]).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains(&format!("trace {NEWEST}")), "{stdout}");
    assert!(
        stderr.contains("1 row of the database could not be read"),
        "{stderr}"
    );

    // The TUI lists the rest too, and says so once in its status bar.
    let store = Store::open(&db).await.unwrap();
    let (sender, mut actions) = unbounded_channel();
    let effects = Effects::new(Some(store.clone()), dir.path().to_path_buf(), sender);
    effects.spawn(Effect::Poll { last: None });
    let mut listed = None;
    let mut said = None;
    while listed.is_none() || said.is_none() {
        match tokio::time::timeout(Duration::from_secs(30), actions.recv())
            .await
            .unwrap()
            .unwrap()
        {
            Action::TracesLoaded { rows, .. } => listed = Some(rows),
            Action::Failed(note) => said = Some(note),
            other => panic!("{other:?}"),
        }
    }
    let rows = listed.unwrap();
    assert_eq!(rows.len(), sample_files().len() - 1);
    assert!(rows.iter().all(|r| r.id != BUY_MILK));
    assert!(said.unwrap().contains("could not be read"));
    store.close().await;
}

#[tokio::test]
async fn search_survives_a_hop_id_that_is_not_text_and_reads_text_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    sql(
        &db,
        &[
            // The agent hop of buy milk holds "milk"; its id becomes bytes that are not UTF-8.
            &format!(
                "update hops set id = x'fffe00' where id =
                 (select id from hops where trace_id = '{BUY_MILK}' order by seq limit 1)"
            ),
            &format!(
                "update hops set request_body = cast('{{\"content\":\"Caf\\u00e9 CR\\u00c8ME\"}}' as blob)
                 where id = (select id from hops where trace_id = '{NEWEST}' order by seq limit 1)"
            ),
            &format!(
                "update hops set response_body = cast('{{\"text\":\"ÉTÉ À PARIS\"}}' as blob)
                 where id = (select id from hops where trace_id = '{NEWEST}' order by seq limit 1)"
            ),
        ],
    )
    .await;
    let store = Store::open_read_only(&db).await.unwrap();
    let milk = matching_hops(&store, "buy milk").await.unwrap();
    assert!(!milk.is_empty(), "the other hops still match");
    assert_eq!(
        store.unreadable_rows(),
        1,
        "the hop with a byte id is skipped, counted"
    );
    for needle in ["café crème", "CAFÉ", "été à paris", "Été"] {
        let found = matching_hops(&store, needle).await.unwrap();
        assert_eq!(found.len(), 1, "{needle}");
        assert_eq!(found[0].trace_id.as_deref(), Some(NEWEST), "{needle}");
    }
    assert!(matching_hops(&store, "thé").await.unwrap().is_empty());
    store.close().await;
}

#[tokio::test]
async fn import_takes_only_trace_ids_and_the_tui_export_stays_in_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let buy_milk = sample_files()
        .into_iter()
        .find(|f| f.ends_with("buy-milk.json"))
        .unwrap();
    let mut log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&buy_milk).unwrap()).unwrap();
    log["trace"]["id"] = "../../escape".into();
    let hostile = dir.path().join("hostile.json");
    std::fs::write(&hostile, log.to_string()).unwrap();
    let fresh = dir.path().join("fresh.db");
    let stderr = failure(tracer(&fresh).arg("import").arg(&hostile));
    assert!(stderr.contains("is not a trace id"), "{stderr}");
    assert!(!fresh.exists(), "refused before a database is made");

    // A database that holds such an id anyway: `e` writes inside the export folder.
    let db = sample_db(dir.path());
    sql(
        &db,
        &[
            &format!("update hops set trace_id = '../../escape' where trace_id = '{BUY_MILK}'"),
            &format!("update traces set id = '../../escape' where id = '{BUY_MILK}'"),
        ],
    )
    .await;
    let exports: PathBuf = dir.path().join("a/b/exports");
    std::fs::create_dir_all(&exports).unwrap();
    let store = Store::open(&db).await.unwrap();
    let (sender, mut actions) = unbounded_channel();
    let effects = Effects::new(Some(store.clone()), exports.clone(), sender);
    effects.spawn(Effect::Export("../../escape".into()));
    let action = tokio::time::timeout(Duration::from_secs(30), actions.recv())
        .await
        .unwrap()
        .unwrap();
    let Action::Exported { path } = action else {
        panic!("expected an export: {action:?}");
    };
    let path = PathBuf::from(path);
    assert_eq!(path.parent(), Some(exports.as_path()), "{}", path.display());
    assert!(!dir.path().join("a/escape.json").exists());
    assert_eq!(std::fs::read_dir(dir.path().join("a")).unwrap().count(), 1);
    store.close().await;
}

#[tokio::test]
async fn the_tui_waits_for_a_database_that_is_not_recorded_yet() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("later");
    let db = sub.join("tracer.db");
    let (sender, mut actions) = unbounded_channel();
    let effects = Effects::waiting_for(db.clone(), dir.path().to_path_buf(), sender);
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(30), actions.recv())
            .await
            .unwrap()
            .unwrap()
    };
    effects.spawn(Effect::Poll { last: None });
    let Action::TracesLoaded { rows, token, .. } = next().await else {
        panic!("an empty list while there is no database");
    };
    assert!(rows.is_empty());
    assert!(!db.exists(), "waiting creates nothing");
    effects.spawn(Effect::Poll { last: Some(token) });
    assert!(matches!(next().await, Action::PollDone { .. }));

    // A recorder makes it: the next poll opens it and lists what it holds.
    std::fs::create_dir(&sub).unwrap();
    assert_eq!(sample_db(&sub), db);
    effects.spawn(Effect::Poll { last: Some(token) });
    let Action::TracesLoaded { rows, .. } = next().await else {
        panic!("the list once the database exists");
    };
    assert_eq!(rows.len(), sample_files().len());
}

#[test]
fn a_reader_pointed_at_an_empty_file_says_so_and_leaves_it_empty() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("empty.db");
    std::fs::write(&db, b"").unwrap();
    for args in [
        &["ls"][..],
        &["show", "abc"],
        &["export", "abc", "--format", "md"],
    ] {
        let output = tracer(&db).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("empty.db is empty: nothing was recorded into it"),
            "{args:?}: {stderr}"
        );
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 0, "left as it was");
        assert!(!dir.path().join("empty.db-wal").exists());
    }
}
