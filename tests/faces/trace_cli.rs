//! `tracer ls`, `show`, `import` and `correlate` as a user runs them, over a database whose hops
//! were written without grouping (as `tracer wrap` in another process writes them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::trace_hops as support;

use std::path::Path;

use assert_cmd::Command;
use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use serde_json::Value;
use support::buy;
use tracer_export::hop_log::HopLog;
use tracer_store::{Store, hops};

/// Writes two buy-milk walks as bare hops: no trace assigned.
async fn record_ungrouped(db: &Path) {
    let store = Store::open(db).await.unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    for hop in buy("a", "buy milk", 0)
        .into_iter()
        .chain(buy("b", "buy eggs", 5000))
    {
        hops::insert_start(&mut conn, &hop.start).await.unwrap();
        hops::apply_end(&mut conn, hop.end.as_ref().unwrap())
            .await
            .unwrap();
    }
    drop(conn);
    store.close().await;
}

fn tracer(db: &Path) -> Command {
    let mut command = cargo_bin_cmd!("tracer");
    command.arg("--db").arg(db);
    command
}

fn stdout_of(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn ls_groups_new_hops_and_lists_traces_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    record_ungrouped(&db).await;
    let table = stdout_of(tracer(&db).arg("ls"));
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("TITLE"),
        "{table}"
    );
    assert!(lines[1].contains("\"Add buy eggs to my notes\""), "{table}");
    assert!(
        lines[1].contains("append") && lines[1].contains(" ok "),
        "{table}"
    );
    assert!(lines[2].contains("\"Add buy milk to my notes\""), "{table}");

    let json: Value = serde_json::from_str(&stdout_of(tracer(&db).args(["ls", "--json"]))).unwrap();
    let traces = json.as_array().unwrap();
    assert_eq!(traces.len(), 2);
    assert_eq!(traces[1]["id"], format!("{:0>32}", "a1"));
    assert_eq!(traces[1]["hop_count"], 5);
    assert_eq!(traces[1]["message_count"], 10);
    assert_eq!(traces[1]["duration_ns"], 1_000_000_000);
    assert_eq!(traces[1]["status"], "ok");
    assert_eq!(traces[1]["tools_used"], serde_json::json!(["append"]));

    let hops: Value =
        serde_json::from_str(&stdout_of(tracer(&db).args(["ls", "--hops", "--json"]))).unwrap();
    assert_eq!(hops.as_array().unwrap().len(), 10);
    assert!(
        hops.as_array()
            .unwrap()
            .iter()
            .all(|h| h["trace_id"].is_string())
    );
}

#[tokio::test]
async fn show_prints_the_numbered_explained_trace_and_its_hop_log() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    record_ungrouped(&db).await;
    let milk = format!("{:0>32}", "a1");
    // A prefix is enough when it names one trace.
    let text = stdout_of(tracer(&db).args(["show", &milk[..31]]));
    assert!(
        text.starts_with(&format!("trace {milk}  \"Add buy milk to my notes\"\n")),
        "{text}"
    );
    assert!(
        text.contains("5 hops · 10 messages · 1.00 s · ok · tools: append"),
        "{text}"
    );
    assert!(
        text.contains(
            "\n  1 → you → agent  POST /agent  \"Add buy milk to my notes\"  (+0.0 ms)\n"
        ),
        "{text}"
    );
    assert!(text.contains(" 5 ← model → agent  200  the model asks for tool append {\"content\":\"buy milk\"} (it does not run it: the host will) · run in message 6  (+500 ms, took 470 ms)\n"), "{text}");
    assert!(text.contains("10 ← agent → you  200  reply:"), "{text}");
    // Each message has its explanation under it, indented.
    // (The heading, its facts, what the model calls were billed, a blank line.)
    assert!(
        text.lines()
            .nth(2)
            .unwrap()
            .starts_with("  billed across 2 calls: unknown (no usage reported)"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().skip(4).collect();
    assert!(lines.len() > 10, "{text}");
    assert!(
        lines[1].starts_with("       ") && lines[1].trim().len() > 10,
        "{text}"
    );

    let json = stdout_of(tracer(&db).args(["show", &milk, "--json"]));
    let store = Store::open(&db).await.unwrap();
    let log = HopLog::from_store(&store, &milk).await.unwrap();
    store.close().await;
    assert_eq!(json, log.to_json_pretty());
}

#[tokio::test]
async fn an_unknown_trace_is_a_one_line_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    Store::open(&db).await.unwrap().close().await;
    let output = tracer(&db).args(["show", "deadbeef"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "tracer: no trace deadbeef in the database; tracer ls lists the traces it holds\n"
    );
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn import_reads_a_hop_log_back_and_refuses_what_is_not_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    record_ungrouped(&db).await;
    let milk = format!("{:0>32}", "a1");
    let exported = stdout_of(tracer(&db).args(["show", &milk, "--json"]));
    let file = dir.path().join("buy-milk.json");
    std::fs::write(&file, &exported).unwrap();

    let other = dir.path().join("other.db");
    let said = stdout_of(tracer(&other).arg("import").arg(&file));
    assert!(
        said.starts_with(&format!(
            "imported trace {milk} \"Add buy milk to my notes\" (5 hops)"
        )),
        "{said}"
    );
    assert_eq!(
        stdout_of(tracer(&other).args(["show", &milk, "--json"])),
        exported
    );
    let listing: Value =
        serde_json::from_str(&stdout_of(tracer(&other).args(["ls", "--json"]))).unwrap();
    assert_eq!(listing.as_array().unwrap().len(), 1);
    // A rebuild of the grouping leaves imported traces alone.
    let rebuilt = stdout_of(tracer(&other).args(["correlate", "--rebuild"]));
    assert!(rebuilt.starts_with("regrouped 0 hops"), "{rebuilt}");
    assert_eq!(
        stdout_of(tracer(&other).args(["show", &milk, "--json"])),
        exported
    );

    // The same file again: one line, exit 1, nothing written.
    tracer(&other)
        .arg("import")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "trace {milk} is already in the database"
        )))
        .stderr(predicate::str::contains("buy-milk.json"));

    for (name, content) in [
        ("notes.txt", "buy milk\n"),
        ("other.json", "{\"log\": {\"version\": \"1.2\"}}"),
    ] {
        let bad = dir.path().join(name);
        std::fs::write(&bad, content).unwrap();
        let fresh = dir.path().join(format!("{name}.db"));
        let output = tracer(&fresh).arg("import").arg(&bad).output().unwrap();
        assert_eq!(output.status.code(), Some(1));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(name) && stderr.contains("not a tracer hop log"),
            "{stderr}"
        );
        assert!(!fresh.exists(), "no database created for a bad file");
    }
    tracer(&other)
        .args(["import", "/no/such/file.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("reading /no/such/file.json"));
}

#[tokio::test]
async fn correlate_groups_then_keeps_and_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    record_ungrouped(&db).await;
    assert_eq!(
        stdout_of(tracer(&db).arg("correlate")),
        "grouped 10 hops into 2 traces\n"
    );
    assert_eq!(
        stdout_of(tracer(&db).arg("correlate")),
        "grouped 0 hops into 0 traces\n"
    );
    assert_eq!(
        stdout_of(tracer(&db).args(["correlate", "--rebuild"])),
        "regrouped 10 hops into 2 traces\n"
    );
    let hops: Value =
        serde_json::from_str(&stdout_of(tracer(&db).args(["ls", "--hops", "--json"]))).unwrap();
    assert!(
        hops.as_array()
            .unwrap()
            .iter()
            .all(|h| h["trace_id"].is_string())
    );
}
