//! `tracer import --claude-transcript` and `--claude-bodies` over what the real Claude Code
//! wrote of one run (tests/fixtures/agents/claude-code/{transcript,raw-bodies}), beside tracer's
//! wire recording of the same run: each gives the wire's trace shape (the same model calls, the
//! same tools asked in order, the same reply), the Bash the host ran itself placed after the
//! answer that asked for it, the limits of each source said; into the wire's own database the
//! calls are joined by request id, not added again.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::sample_db::TRACER;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agents/claude-code"
);

fn transcript() -> PathBuf {
    let dir = Path::new(FIXTURES).join("transcript");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(".jsonl"));
    file.unwrap().path()
}

fn tracer(db: &Path, args: &[&str]) -> String {
    let out = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tracer {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn wire_db(dir: &Path) -> PathBuf {
    crate::agent_telemetry::unzipped_db(&format!("{FIXTURES}/sources-wire/wire.db.gz"), dir)
}

/// The buy-milk trace's shape: its model calls, the tools the model asked for in order, the
/// reply, and its hop log.
fn shape(db: &Path) -> (usize, Vec<String>, String, Value) {
    let traces: Value = serde_json::from_str(&tracer(db, &["ls", "--json"])).unwrap();
    let trace = traces
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["title"] == "Add buy milk to my notes")
        .unwrap();
    let log: Value = serde_json::from_str(&tracer(
        db,
        &["show", trace["id"].as_str().unwrap(), "--json"],
    ))
    .unwrap();
    let messages = log["messages"].as_array().unwrap();
    let model_answers: Vec<&Value> = messages
        .iter()
        .filter(|m| m["direction"] == "←" && m["dialect"] == "anthropic.messages")
        .collect();
    let asked: Vec<String> = model_answers
        .iter()
        .filter_map(|m| {
            let summary = m["summary"].as_str().unwrap();
            let tool = summary.split("asks for tool ").nth(1)?;
            Some(tool.split_whitespace().next()?.to_string())
        })
        .collect();
    let reply = model_answers.last().unwrap()["summary"]
        .as_str()
        .unwrap()
        .to_string();
    (model_answers.len(), asked, reply, log)
}

#[test]
fn a_transcript_and_raw_bodies_give_the_wires_trace_shape() {
    let dir = tempfile::tempdir().unwrap();
    let wire = shape(&wire_db(dir.path()));
    assert_eq!(wire.0, 3);
    assert_eq!(wire.1, ["Bash", "mcp__notes__append"]);

    let from_transcript = dir.path().join("transcript.db");
    let said = tracer(
        &from_transcript,
        &[
            "import",
            "--claude-transcript",
            transcript().to_str().unwrap(),
        ],
    );
    assert!(said.contains("3 as hops, 0 already on the wire"), "{said}");
    assert!(
        said.contains("no system prompt, tools or parameters"),
        "{said}"
    );
    let read = shape(&from_transcript);
    assert_eq!((read.0, &read.1, &read.2), (wire.0, &wire.1, &wire.2));
    // The Bash the host ran: between the answer that asked for it and the next request.
    let events = read.3["agent_events"].as_array().unwrap();
    let ran = events.iter().find(|e| e["name"] == "tool_result").unwrap();
    assert_eq!(ran["rule"], "tool call id");
    assert_eq!(ran["after_message"], 2, "{ran:#}");
    assert!(
        ran["sentence"]
            .as_str()
            .unwrap()
            .contains("ran Bash `echo hello` itself: success")
    );
    let note = read.3["hops"][0]["note"].as_str().unwrap_or_default();
    assert!(note.contains("not the wire"), "{:#}", read.3["hops"][0]);

    let from_bodies = dir.path().join("bodies.db");
    let bodies = format!("{FIXTURES}/raw-bodies");
    let said = tracer(&from_bodies, &["import", "--claude-bodies", &bodies]);
    assert!(said.contains("3 as hops"), "{said}");
    let read = shape(&from_bodies);
    assert_eq!((read.0, &read.1, &read.2), (wire.0, &wire.1, &wire.2));
    // Copied with the files' times scrambled (as a checkout leaves them): the same shape.
    let copy = dir.path().join("copied");
    std::fs::create_dir(&copy).unwrap();
    for (i, entry) in std::fs::read_dir(&bodies).unwrap().flatten().enumerate() {
        let to = copy.join(entry.file_name());
        std::fs::copy(entry.path(), &to).unwrap();
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 - 7 * i as u64);
        std::fs::File::options()
            .write(true)
            .open(&to)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    let scrambled = dir.path().join("scrambled.db");
    tracer(
        &scrambled,
        &["import", "--claude-bodies", copy.to_str().unwrap()],
    );
    let again = shape(&scrambled);
    assert_eq!((again.0, &again.1, &again.2), (wire.0, &wire.1, &wire.2));
    // The raw bodies are the requests as sent: the tools are there.
    let first = &read.3["messages"][0];
    assert!(
        first["summary"].as_str().unwrap().contains("29 tools"),
        "{first:#}"
    );
}

#[test]
fn into_the_wires_database_the_calls_are_joined_and_the_local_run_placed() {
    let dir = tempfile::tempdir().unwrap();
    let db = wire_db(dir.path());
    let hops_before = tracer(&db, &["ls", "--hops", "--json", "-n", "1000"]);
    let said = tracer(
        &db,
        &[
            "import",
            "--claude-transcript",
            transcript().to_str().unwrap(),
            "--claude-bodies",
            &format!("{FIXTURES}/raw-bodies"),
        ],
    );
    assert!(
        said.contains(
            "0 as hops, 3 already on the wire (joined, not added), 2 of the agent's own events"
        ),
        "{said}"
    );
    assert!(
        said.contains("0 as hops, 3 already on the wire (joined, not added), 0 of"),
        "{said}"
    );
    assert_eq!(
        tracer(&db, &["ls", "--hops", "--json", "-n", "1000"]),
        hops_before
    );
    let (_, _, _, log) = shape(&db);
    let events = log["agent_events"].as_array().unwrap();
    let ran = events.iter().find(|e| e["name"] == "tool_result").unwrap();
    assert_eq!(ran["rule"], "tool call id");
    let messages = log["messages"].as_array().unwrap();
    let asked = messages
        .iter()
        .find(|m| {
            m["summary"]
                .as_str()
                .unwrap()
                .contains("asks for tool Bash")
        })
        .unwrap();
    assert_eq!(ran["after_message"], asked["number"], "{ran:#}");
}

#[test]
fn a_file_that_is_not_a_transcript_is_refused_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.jsonl");
    std::fs::write(&file, "not json\n[1,2]\n").unwrap();
    let db = dir.path().join("t.db");
    let out = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["import", "--claude-transcript"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("holds no lines of a Claude Code transcript (2 unreadable)"),
        "{stderr}"
    );
    assert!(!db.exists(), "nothing was written");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["import", "--claude-bodies"])
        .arg(&empty)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no *.request.json"));
}
