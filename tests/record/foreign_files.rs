//! Other programs' files are never touched: a foreign SQLite database or text file given as
//! `--db` is refused byte-identical with no `-wal`/`-shm` beside it; reading commands on a
//! missing database say so and create nothing; a `--db` under a regular file is named.

use std::path::Path;
use std::process::Command;

fn tracer(db: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("TRACER_DB")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every command that opens the database, recording ones included (`tui` needs a terminal
/// before it looks at the database; `replay --plain` takes the same path to it).
/// The reading commands, then one that records.
const COMMANDS: [&[&str]; 10] = [
    &["ls"],
    &["ls", "--hops"],
    &["show", "abc"],
    &["export", "abc"],
    &["replay", "abc", "--plain"],
    &["correlate"],
    &["diff", "abc", "def"],
    &["rerun", "abc"],
    &["mcp", "--stdio"],
    &["proxy", "--route", "model=127.0.0.1:0=http://127.0.0.1:9"],
];
const READING: usize = 9;

fn beside(db: &Path, suffix: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{}{suffix}", db.display()))
}

#[tokio::test]
async fn a_foreign_sqlite_database_is_left_byte_identical() {
    for journal_mode in ["delete", "wal"] {
        foreign_database_left_byte_identical(journal_mode).await;
    }
}

async fn foreign_database_left_byte_identical(journal_mode: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    {
        use sqlx::Connection;
        let url = format!("sqlite://{}?mode=rwc", db.display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let pragma = format!("pragma journal_mode = {journal_mode}");
        sqlx::query(sqlx::AssertSqlSafe(pragma))
            .execute(&mut conn)
            .await
            .unwrap();
        sqlx::query("create table people (name text)")
            .execute(&mut conn)
            .await
            .unwrap();
        sqlx::query("insert into people values ('ada')")
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    for args in COMMANDS {
        let (ok, stderr) = tracer(&db, args);
        assert!(!ok, "{journal_mode}: {args:?} refused");
        assert!(
            stderr.contains("is not a tracer database") && stderr.contains("people"),
            "{args:?}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "{args:?} changed no byte"
        );
        for suffix in ["-wal", "-shm", "-journal"] {
            assert!(!beside(&db, suffix).exists(), "{args:?} left {suffix}");
        }
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "only app.db is there: {left:?}");
}

#[test]
fn a_file_that_is_not_sqlite_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.txt");
    std::fs::write(&db, "buy milk\nand bread, and a much longer line\n").unwrap();
    for args in COMMANDS {
        let (ok, stderr) = tracer(&db, args);
        assert!(
            !ok && stderr.contains("not an SQLite database"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&db).unwrap(),
        "buy milk\nand bread, and a much longer line\n"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn reading_commands_on_a_missing_database_say_so_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missing/dir/x.db");
    for args in &COMMANDS[..READING] {
        let (ok, stderr) = tracer(&db, args);
        assert!(!ok, "{args:?}");
        assert_eq!(
            stderr,
            format!(
                "tracer: no database at {}; record one with tracer proxy or tracer demo\n",
                db.display()
            ),
            "{args:?}"
        );
        assert!(
            !dir.path().join("missing").exists(),
            "{args:?} created nothing"
        );
    }
}

#[test]
fn a_db_under_a_regular_file_is_an_error_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain.txt");
    std::fs::write(&file, "x").unwrap();
    let db = file.join("x.db");
    for args in COMMANDS {
        let (ok, stderr) = tracer(&db, args);
        assert!(!ok, "{args:?}");
        assert!(
            stderr.contains(&format!("{} is a file, not a folder", file.display())),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}
