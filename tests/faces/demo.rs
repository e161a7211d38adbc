//! `tracer demo` as a newcomer runs it: from an empty folder, with no Ollama, it plays the
//! article with the built-in recorded model and prints the ten numbered messages of buy milk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn demo_runs_the_article_from_an_empty_folder_without_ollama() {
    let empty = tempfile::tempdir().unwrap();
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .current_dir(empty.path())
        .env("OLLAMA_HOST", format!("127.0.0.1:{closed_port}"))
        .env_remove("TRACER_DB")
        .args(["demo", "--dir", "run"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("the recorded buy-milk model"),
        "says which model it used: {stdout}"
    );
    assert!(
        stdout.contains("agent: I've added \"buy milk\" to your notes."),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(empty.path().join("run/notes.txt")).unwrap(),
        "buy milk\n"
    );

    let expected = [
        ("1 →", "you → agent", "POST /agent"),
        ("2 →", "agent → notes", "tools/list"),
        (
            "3 ←",
            "notes → agent",
            "5 tools: read, write, append, update, clear",
        ),
        (
            "4 →",
            "agent → model",
            "POST /api/chat  qwen2.5:7b, 2 messages, 5 tools",
        ),
        (
            "5 ←",
            "model → agent",
            "the model asks for tool append {\"content\":\"buy milk\"}",
        ),
        (
            "6 →",
            "agent → notes",
            "tools/call append {\"content\":\"buy milk\"}",
        ),
        ("7 ←", "notes → agent", "result:"),
        ("8 →", "agent → model", "4 messages (2 more than last time)"),
        (
            "9 ←",
            "model → agent",
            "the model answers: \"I've added \"buy milk\" to your notes.\"",
        ),
        ("10 ←", "agent → you", "reply:"),
    ];
    let numbered: Vec<&str> = stdout
        .lines()
        .map(str::trim_start)
        .filter(|line| {
            line.split(' ')
                .next()
                .is_some_and(|n| n.parse::<u32>().is_ok())
                && line.contains(" → ")
        })
        .collect();
    assert_eq!(
        numbered.len(),
        10,
        "ten numbered messages:\n{}",
        numbered.join("\n")
    );
    for (line, (number, parties, what)) in numbered.iter().zip(expected) {
        assert!(line.starts_with(number), "{line}");
        assert!(line.contains(parties), "{line} should be {parties}");
        assert!(line.contains(what), "{line} should say {what}");
    }
    // The database is left for the next commands the demo prints.
    assert!(empty.path().join("run/tracer.db").is_file());
    let listing = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args([
            "--db",
            empty.path().join("run/tracer.db").to_str().unwrap(),
            "ls",
            "--json",
        ])
        .output()
        .unwrap();
    let traces: serde_json::Value = serde_json::from_slice(&listing.stdout).unwrap();
    assert_eq!(traces[0]["title"], "Add buy milk to my notes");
    assert!(stdout.contains("replay") && stdout.contains("tui") && stdout.contains("export"));
}

/// A closed port for `OLLAMA_HOST`, so the demo uses the recorded model.
fn no_ollama() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("127.0.0.1:{port}")
}

fn titles_in(db: &std::path::Path) -> Vec<String> {
    let listing = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(["ls", "--json"])
        .output()
        .unwrap();
    assert!(listing.status.success(), "{listing:?}");
    let traces: serde_json::Value = serde_json::from_slice(&listing.stdout).unwrap();
    traces
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["title"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn demo_records_into_the_database_given_by_db_or_tracer_db() {
    let dir = tempfile::tempdir().unwrap();
    let given = dir.path().join("mine/given.db");
    let from_env = dir.path().join("env.db");
    let demo = |db_flag: Option<&std::path::Path>, env: Option<&std::path::Path>, run: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
        command
            .current_dir(dir.path())
            .env("OLLAMA_HOST", no_ollama())
            .env_remove("TRACER_DB");
        if let Some(db) = db_flag {
            command.arg("--db").arg(db);
        }
        if let Some(db) = env {
            command.env("TRACER_DB", db);
        }
        let output = command.args(["demo", "--dir", run]).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(output.status.success(), "{stdout}\n{stderr}");
        stdout
    };
    let stdout = demo(Some(&given), None, "one");
    assert_eq!(titles_in(&given), ["Add buy milk to my notes"]);
    assert!(
        !dir.path().join("one/tracer.db").exists(),
        "the demo's own database is not made when --db names one"
    );
    assert!(
        stdout.contains(&format!("--db {} tui", given.display())),
        "the next commands name the database used: {stdout}"
    );
    // A second demo into the same database adds its trace and shows that one.
    let again = demo(Some(&given), None, "two");
    assert_eq!(titles_in(&given).len(), 2);
    assert!(again.contains("10 ← agent → you"), "{again}");

    demo(None, Some(&from_env), "three");
    assert_eq!(titles_in(&from_env), ["Add buy milk to my notes"]);
    assert!(!dir.path().join("three/tracer.db").exists());
}

#[test]
fn the_demo_next_lines_run_as_printed() {
    let dir = tempfile::tempdir().unwrap();
    // No tracer on the PATH: the next commands name the binary that ran.
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .current_dir(dir.path())
        .env("OLLAMA_HOST", no_ollama())
        .env("PATH", "/usr/bin:/bin")
        .env_remove("TRACER_DB")
        .args(["demo", "--dir", "run"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    let next: Vec<&str> = stdout
        .lines()
        .skip_while(|line| *line != "Next:")
        .skip(1)
        .collect();
    assert_eq!(next.len(), 4, "{stdout}");
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_tracer")).unwrap();
    for line in &next {
        assert!(
            line.trim_start().starts_with(binary.to_str().unwrap()),
            "runnable without tracer on the PATH: {line}"
        );
    }
    // And each runs as printed (the tui needs a terminal: it says so, after parsing).
    for line in next.iter().filter(|l| l.contains(" export ")) {
        let command = line.split("  #").next().unwrap().trim();
        let words: Vec<&str> = command.split_whitespace().collect();
        let ran = Command::new(words[0])
            .args(&words[1..])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(ran.status.success(), "{command}: {ran:?}");
    }
    assert!(dir.path().join("buy-milk.html").is_file());
}
