//! A record you can trust under faults: `tracer proxy` as a real process under load, killed,
//! stopped, with its database locked or failing; the database, the counters and the exit line
//! must agree, and no hop whose response completed may be missing.

mod load;
pub(crate) mod process;

use std::time::Duration;

use load::Load;
use process::{ProxyProcess, upstream};

/// Hops in the database: the `x-seq` of each, with its state.
async fn recorded(db: &std::path::Path) -> Vec<(u64, String)> {
    let url = format!("sqlite://{}?mode=ro", db.display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let rows: Vec<(String, String)> = sqlx::query_as(
        "select json_extract(h.value, '$.value'), hops.state
         from hops, json_each(hops.request_headers) as h
         where json_extract(h.value, '$.name') = 'x-seq'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    pool.close().await;
    rows.into_iter()
        .map(|(seq, state)| (seq.parse().unwrap(), state))
        .collect()
}

async fn scalar(db: &std::path::Path, sql: &'static str) -> i64 {
    let url = format!("sqlite://{}?mode=ro", db.display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let value: Option<i64> = sqlx::query_scalar(sql).fetch_optional(&pool).await.unwrap();
    pool.close().await;
    value.unwrap_or(0)
}

/// Asserts what every clean stop must show: each answered request is a complete row, nothing is
/// in flight, and the exit line, the counter and the rows agree.
async fn assert_agree(db: &std::path::Path, answered: &[u64], exit: &process::ExitLine) {
    let rows = recorded(db).await;
    let total = scalar(db, "select count(*) from hops").await;
    let in_flight = scalar(db, "select count(*) from hops where state = 'in_flight'").await;
    let not_written = scalar(
        db,
        "select value from counters where name = 'hops_not_written'",
    )
    .await;
    eprintln!("{} answered, {total} rows; {}", answered.len(), exit.line);
    assert_eq!(in_flight, 0, "no row is left in flight");
    assert_eq!(
        exit.written as i64, total,
        "exit line {exit:?} and rows agree"
    );
    assert_eq!(
        exit.not_written as i64, not_written,
        "exit line and counter agree"
    );
    assert_eq!(not_written, 0, "nothing was lost");
    let complete: std::collections::HashSet<u64> = rows
        .iter()
        .filter(|(_, state)| state == "complete")
        .map(|(seq, _)| *seq)
        .collect();
    let missing: Vec<u64> = answered
        .iter()
        .filter(|seq| !complete.contains(seq))
        .copied()
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} answered requests are not complete rows, e.g. {:?}",
        missing.len(),
        answered.len(),
        &missing[..missing.len().min(5)]
    );
}

#[tokio::test]
async fn sigterm_under_load_writes_every_hop() {
    let upstream = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let proxy = ProxyProcess::start(&db, upstream).await;
    let load = Load::start(proxy.addr, 16);
    load.wait_for(2000).await;
    let exit = proxy.terminate().await;
    let answered = load.stop().await;
    assert!(answered.len() >= 2000);
    assert_agree(&db, &answered, &exit).await;
    assert!(
        !process::journals(&db).iter().any(|p| p.exists()),
        "journal removed"
    );
}

#[tokio::test]
async fn kill_9_under_load_loses_no_answered_hop() {
    let upstream = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let proxy = ProxyProcess::start(&db, upstream).await;
    let load = Load::start(proxy.addr, 16);
    load.wait_for(3000).await;
    proxy.kill();
    let answered = load.stop().await;
    // The next recorder on the database takes in the journal the killed process left.
    let store = tracer_store::Store::open(&db).await.unwrap();
    let (handle, writer) = tracer_store::Recorder::spawn(store.clone()).unwrap();
    drop(handle);
    let report = writer.await.unwrap();
    store.close().await;
    assert!(
        process::journals(&db).is_empty(),
        "the journal was taken in and removed"
    );
    let complete: std::collections::HashSet<u64> = recorded(&db)
        .await
        .into_iter()
        .filter(|(_, state)| state == "complete")
        .map(|(seq, _)| seq)
        .collect();
    let missing = answered.iter().filter(|s| !complete.contains(s)).count();
    eprintln!(
        "kill -9: {} answered, {} complete rows, {} taken in from the journal",
        answered.len(),
        complete.len(),
        report.hops_taken_in
    );
    assert_eq!(
        missing,
        0,
        "every answered request is a complete row ({} answered, {} taken in)",
        answered.len(),
        report.hops_taken_in
    );
}

#[tokio::test]
async fn a_database_locked_longer_than_any_backlog_loses_nothing() {
    let upstream = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let proxy = ProxyProcess::start(&db, upstream).await;
    let lock = process::hold_exclusive_lock(&db).await;
    let load = Load::start(proxy.addr, 16);
    // Well past what the earlier 8192-event queue held, and several busy timeouts long.
    load.wait_for(12_000).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    lock.release().await;
    let before_release = load.answered();
    load.wait_for(before_release + 500).await;
    let exit = proxy.terminate().await;
    let answered = load.stop().await;
    assert_agree(&db, &answered, &exit).await;
}

#[tokio::test]
async fn a_database_that_fails_writes_and_recovers_resumes_recording() {
    let upstream = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let proxy = ProxyProcess::start(&db, upstream).await;
    let load = Load::start(proxy.addr, 4);
    load.wait_for(300).await;
    let Some(frozen) = process::Immutable::set(&db) else {
        eprintln!("skipped: chattr +i is not available here (it needs root on ext4-like fs)");
        proxy.terminate().await;
        load.stop().await;
        return;
    };
    let at_freeze = load.answered();
    load.wait_for(at_freeze + 1500).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    drop(frozen);
    // Recording resumes while the proxy runs: the rows catch up with the answers.
    let target = load.answered();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while scalar(&db, "select count(*) from hops where state = 'complete'").await < target as i64 {
        assert!(
            std::time::Instant::now() < deadline,
            "recording did not resume"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // And another process can take the write lock while it runs.
    process::hold_exclusive_lock(&db).await.release().await;
    let exit = proxy.terminate().await;
    let answered = load.stop().await;
    assert_agree(&db, &answered, &exit).await;
    // Grouping recovered too: every hop has its trace.
    assert_eq!(
        scalar(&db, "select count(*) from hops where trace_id is null").await,
        0,
        "{}",
        exit.stderr
    );
}

#[tokio::test]
async fn a_lock_held_past_the_stop_leaves_the_rest_in_the_journal_for_the_next_run() {
    let upstream = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let proxy = ProxyProcess::start(&db, upstream).await;
    let load = Load::start(proxy.addr, 4);
    load.wait_for(200).await;
    let lock = process::hold_exclusive_lock(&db).await;
    let at_lock = load.answered();
    load.wait_for(at_lock + 500).await;
    let started = std::time::Instant::now();
    let exit = proxy.terminate().await;
    let answered = load.stop().await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped in {:?}: {}",
        started.elapsed(),
        exit.stderr
    );
    assert!(exit.line.contains("hops wait in"), "{}", exit.line);
    lock.release().await;
    let rows = scalar(&db, "select count(*) from hops").await;
    assert_eq!(
        exit.written as i64, rows,
        "the exit line counts only rows in the database"
    );
    assert_eq!(exit.not_written, 0);
    assert_eq!(
        process::journals(&db).len(),
        1,
        "the journal is left beside the database"
    );
    // The next command that opens the database, a reading one too, takes it in: every answered
    // request is then a complete row, and `tracer ls` already lists them.
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .args(["ls", "--hops", "--json", "-n", "1000000"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    let hops: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(
        hops.as_array().unwrap().len() as i64 > rows,
        "ls saw the journal's hops"
    );
    assert!(process::journals(&db).is_empty());
    let complete: std::collections::HashSet<u64> = recorded(&db)
        .await
        .into_iter()
        .filter(|(_, state)| state == "complete")
        .map(|(seq, _)| seq)
        .collect();
    assert!(answered.iter().all(|seq| complete.contains(seq)));
    assert_eq!(
        scalar(&db, "select count(*) from hops where state = 'in_flight'").await,
        0
    );
}

#[tokio::test]
async fn a_full_disk_loses_only_counted_hops_and_recording_resumes() {
    let Some(disk) = process::SmallDisk::mount(32) else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)");
        return;
    };
    let upstream = upstream().await;
    let db = disk.dir.path().join("t.db");
    let proxy = ProxyProcess::start(&db, upstream).await;
    let load = Load::start(proxy.addr, 4);
    load.wait_for(300).await;
    let filler = disk.fill();
    let at_full = load.answered();
    load.wait_for(at_full + 500).await;
    std::fs::remove_file(&filler).unwrap();
    let at_free = load.answered();
    load.wait_for(at_free + 500).await;
    let exit = proxy.terminate().await;
    let answered = load.stop().await;
    assert_lost_only_counted_and_resumed(&db, &answered, &exit).await;
}

#[tokio::test]
async fn a_file_size_limit_loses_only_counted_hops_and_recording_resumes() {
    // The full disk again, without root: writes past a file size limit fail (EFBIG) for the
    // journal and the database alike, until the limit is lifted.
    let upstream = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let proxy = ProxyProcess::start_limitable(&db, upstream).await;
    let load = Load::start(proxy.addr, 4);
    load.wait_for(300).await;
    assert!(
        proxy.limit_file_size(Some(1)),
        "prlimit could not set the limit"
    );
    let at_full = load.answered();
    load.wait_for(at_full + 500).await;
    assert!(
        proxy.limit_file_size(None),
        "prlimit could not lift the limit"
    );
    let at_free = load.answered();
    load.wait_for(at_free + 500).await;
    let exit = proxy.terminate().await;
    let answered = load.stop().await;
    assert_lost_only_counted_and_resumed(&db, &answered, &exit).await;
}

/// After writes failed for a while and then succeeded again: the exit line, the rows and the
/// counter agree, nothing is left in flight, every answered request missing from the rows was
/// counted, and the last 100 answers are complete rows.
async fn assert_lost_only_counted_and_resumed(
    db: &std::path::Path,
    answered: &[u64],
    exit: &process::ExitLine,
) {
    let rows = scalar(db, "select count(*) from hops").await;
    let in_flight = scalar(db, "select count(*) from hops where state = 'in_flight'").await;
    let counted = scalar(
        db,
        "select value from counters where name = 'hops_not_written'",
    )
    .await;
    eprintln!("{} answered, {rows} rows; {}", answered.len(), exit.line);
    assert_eq!(exit.written as i64, rows, "exit line and rows agree");
    assert_eq!(
        exit.not_written as i64, counted,
        "exit line and counter agree"
    );
    assert_eq!(in_flight, 0, "no row is left in flight");
    assert!(counted > 0, "a full disk loses hops (and counts them)");
    let complete: std::collections::HashSet<u64> = recorded(db)
        .await
        .into_iter()
        .filter(|(_, state)| state == "complete")
        .map(|(seq, _)| seq)
        .collect();
    let missing = answered.iter().filter(|s| !complete.contains(s)).count();
    assert!(
        missing as i64 <= counted,
        "{missing} answered requests are not complete rows, {counted} counted as lost"
    );
    // Recording resumed once the disk had room: the last answers are all complete rows.
    let mut last: Vec<u64> = answered.to_vec();
    last.sort_unstable();
    let tail = &last[last.len() - 100..];
    assert!(
        tail.iter().all(|s| complete.contains(s)),
        "recording resumed"
    );
}
