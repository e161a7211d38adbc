//! Another process on the database while tracer records (`sqlite3 tracer.db`, as
//! docs/schema.md invites): when it closes, it must not find itself the last connection, take the
//! database for its own, checkpoint it and remove the write-ahead log tracer is still writing to.
//! SQLite sees the other connections by their POSIX locks on the database file, and a process
//! that opens and closes that file once more loses every such lock it held.

use std::path::Path;
use std::process::Command;

use tracer_store::Store;

/// Opens the database in another process (Python's own SQLite), reads the counter, closes it.
fn read_counter_in_another_process(db: &Path) -> i64 {
    let script = "import sqlite3, sys\n\
        c = sqlite3.connect(sys.argv[1])\n\
        row = c.execute(\"select value from counters where name = 'x'\").fetchone()\n\
        c.close()\n\
        print(row[0] if row else 0)\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(db)
        .output()
        .expect("python3 runs (it is on every machine the tests run on)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[tokio::test]
async fn a_reader_in_another_process_never_takes_the_database_from_a_recorder() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let wal = dir.path().join("t.db-wal");
    let store = Store::open(&db).await.unwrap();
    store.add_to_counter("x", 1).await.unwrap();
    // Every connection the pool may have, open at once: the ones it opens now join the one that
    // holds the database already (the pool checks each new one before it keeps it).
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut conn = store.pool().acquire().await.unwrap();
        sqlx::query("select count(*) from hops")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        held.push(conn);
    }
    drop(held);
    assert!(
        wal.exists(),
        "the recorder writes ahead into {}",
        wal.display()
    );

    for round in 1..=3 {
        assert_eq!(read_counter_in_another_process(&db), round);
        assert!(
            wal.exists(),
            "round {round}: the other process took the database and removed the log tracer writes to"
        );
        store.add_to_counter("x", 1).await.unwrap();
    }
    store.close().await;

    // Every write is in the database, and the database is whole.
    let store = Store::open(&db).await.unwrap();
    assert_eq!(store.counter("x").await.unwrap(), 4);
    let check: String = sqlx::query_scalar("pragma integrity_check")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(check, "ok");
    store.close().await;
}
