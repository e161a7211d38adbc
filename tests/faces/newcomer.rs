//! The rough edges of a newcomer's first hour: `show` and `export` read hop-log files as
//! `replay` and `diff` do; `rerun FILE --step` needs no database; `ls -n 0` says what it did;
//! a missing question set is named once; `ls` dates times that are not today's, the TUI's list
//! times across days; the html handout's arrows carry their whole summaries.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::json;

use crate::sample_db::{BUY_MILK, sample_db};
use crate::scripted_model::{Dialect, Reply, ScriptedModel};
use crate::trace_hops::{BASE, MS, buy};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tracer::tui::action::{Action, PollToken};
use tracer::tui::app::App;
use tracer_store::traces::TraceRow;
use tracer_trace::RecordedHop;
use tracer_trace::read::dates::utc_date;

fn buy_milk_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces/buy-milk.json")
}

fn tracer(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
    command
        .arg("--db")
        .arg(db)
        .env_remove("TRACER_DB")
        .timeout(Duration::from_secs(120));
    command
}

fn success(command: &mut Command) -> (String, String) {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn show_and_export_read_a_hop_log_file_as_import_then_show_would() {
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("none.db");
    let file = buy_milk_file();
    let db = sample_db(dir.path());
    for args in [
        vec!["show"],
        vec!["show", "--json"],
        vec!["export", "--format", "md"],
        vec!["export", "--format", "json"],
        vec!["export", "--format", "mermaid"],
    ] {
        let mut from_file = args.clone();
        from_file.insert(1, file.to_str().unwrap());
        let (read, _) = success(tracer(&none).args(&from_file));
        let mut from_db = args.clone();
        from_db.insert(1, BUY_MILK);
        let (stored, _) = success(tracer(&db).args(&from_db));
        assert_eq!(read, stored, "{args:?}");
    }
    assert!(!none.exists(), "a file needs no database and none is made");
    let html = dir.path().join("page.html");
    success(
        tracer(&none)
            .args(["export", file.to_str().unwrap(), "--format", "html", "-o"])
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    // The arrows' labels use the page's width: every summary of buy milk is whole on its arrow.
    let labels: Vec<&str> = page
        .split("<text class=\"label\"")
        .skip(1)
        .map(|rest| rest.split("</text>").next().unwrap())
        .collect();
    assert_eq!(labels.len(), 10, "{labels:?}");
    // Every label is whole but the tool call's, whose link to its tools/call may be cut.
    let cut: Vec<usize> = (0..labels.len())
        .filter(|&i| labels[i].contains('…'))
        .collect();
    assert!(cut.is_empty() || cut == [4], "{labels:#?}");
    assert!(
        labels[4].contains(
            "the model asks for tool append {&quot;content&quot;:&quot;buy milk&quot;} \
             (it does not run it: the host will)"
        ),
        "{labels:#?}"
    );
    let pushed = tracer(&none)
        .args([
            "export",
            file.to_str().unwrap(),
            "--format",
            "otlp",
            "--push",
        ])
        .arg("http://127.0.0.1:9")
        .output()
        .unwrap();
    let stderr = String::from_utf8(pushed.stderr).unwrap();
    assert!(stderr.contains("tracer import"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rerun_of_a_file_step_needs_no_database() {
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![Reply::call("append", json!({"content": "buy milk"}))],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("none.db");
    let output = tracer(&none)
        .args(["rerun", buy_milk_file().to_str().unwrap(), "--step", "1"])
        .args(["--model-url", &model.base_url])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains(r#"append {"content":"buy milk"}  1 of 1"#),
        "{stdout}"
    );
    assert!(!none.exists());
    assert_eq!(model.replies_left(), 0);
}

#[test]
fn ls_says_what_n_0_did_and_dates_what_is_not_today() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let (listed, _) = success(tracer(&db).args(["ls", "-n", "0"]));
    assert!(!listed.contains("yet"), "{listed}");
    assert!(
        listed.contains("-n 0 lists no traces; 6 traces in"),
        "{listed}"
    );
    let (listed, _) = success(tracer(&db).args(["ls", "--hops", "-n", "0"]));
    assert!(
        !listed.contains("yet") && listed.contains("-n 0 lists no hops; "),
        "{listed}"
    );
    // The samples were recorded on other days: each time carries its date.
    let (listed, _) = success(tracer(&db).arg("ls"));
    let first = listed.lines().nth(1).unwrap();
    let started = first.split_whitespace().nth(1).unwrap();
    assert!(
        started.len() == 10 && started.starts_with("20") && started.as_bytes()[4] == b'-',
        "a date: {first}"
    );
    let (hops, _) = success(tracer(&db).args(["ls", "--hops", "-n", "3"]));
    assert!(
        hops.lines()
            .nth(1)
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .len()
            == 10
    );
}

#[test]
fn a_missing_question_set_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let output = tracer(&dir.path().join("t.db"))
        .args(["eval", "nosuch.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
    assert!(stderr.contains("nosuch.toml"), "{stderr}");
}

/// The TUI's list as drawn at 100×10 with these traces loaded.
fn list_drawn(traces: &[(&[RecordedHop], &str)]) -> String {
    let row = |hops: &[RecordedHop], title: &str| TraceRow {
        id: hops[0].start.id.clone(),
        title: Some(title.into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: None,
        created_by: "correlate".into(),
    };
    let mut app = App::browser("tracer.db");
    app.start();
    app.update(Action::TracesLoaded {
        rows: traces
            .iter()
            .map(|(hops, title)| row(hops, title))
            .collect(),
        token: PollToken::default(),
        partial: false,
        sessions: Default::default(),
    });
    let mut terminal = Terminal::new(TestBackend::new(100, 10)).unwrap();
    terminal
        .draw(|frame| tracer::tui::view::render(&mut app, frame))
        .unwrap();
    format!("{:?}", terminal.backend())
}

#[test]
fn the_tui_list_dates_its_times_when_traces_span_days() {
    let day_ms = 86_400_000;
    let today = buy("d", "today's milk", day_ms);
    let yesterday = buy("e", "yesterday's milk", 0);
    let shown = list_drawn(&[(&today, "today"), (&yesterday, "yesterday")]);
    let (first, second) = (utc_date(BASE + day_ms * MS), utc_date(BASE));
    assert_ne!(first, second);
    assert!(shown.contains(&format!("{first} ")), "{shown}");
    assert!(shown.contains(&format!("{second} ")), "{shown}");
    // One day only: the times alone, as before.
    let later = buy("f", "later milk", 5_000);
    let shown = list_drawn(&[(&later, "later"), (&yesterday, "yesterday")]);
    assert!(!shown.contains(&second), "{shown}");
}
