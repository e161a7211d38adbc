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
        ("2 →", "agent → mcp", "tools/list"),
        (
            "3 ←",
            "mcp → agent",
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
            "agent → mcp",
            "tools/call append {\"content\":\"buy milk\"}",
        ),
        ("7 ←", "mcp → agent", "result:"),
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
