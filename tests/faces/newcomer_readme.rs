//! The README's first screen as a newcomer reads it: it says what tracer is, starts with
//! `tracer run -- claude` and the demo, names the article the demo comes from (title, author,
//! where its code is), and its commands run as printed (all but the agent's and the TUI's, which
//! need an agent and a terminal): the demo, importing the coding-agent samples, showing one.
//! `tracer --help` and `tracer demo --help` name the article too.

use std::path::Path;
use std::process::Command;

const TITLE: &str = "How MCP and tool calling really work: I built an AI agent from scratch in Java and traced every step";
const FIRST_SCREEN: usize = 40;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

fn readme_first_screen() -> String {
    readme()
        .lines()
        .take(FIRST_SCREEN)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of the `sh` code blocks in `text`.
fn commands(text: &str) -> Vec<String> {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        match (inside, line.trim()) {
            (false, "```sh") => inside = true,
            (true, "```") => inside = false,
            (true, command) if !command.is_empty() => lines.push(command.to_owned()),
            _ => {}
        }
    }
    lines
}

/// Runs a README line as printed, in `dir`, with `tracer` on the PATH.
fn run_as_printed(dir: &Path, line: &str, ollama: &str) -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_tracer")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("PATH", path)
        .env("OLLAMA_HOST", ollama)
        .env_remove("TRACER_DB")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{line}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn the_readme_first_screen_names_the_article_and_runs_as_printed() {
    let screen = readme_first_screen();
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(&format!("\"{TITLE}\"")),
        "the title: {screen}"
    );
    assert!(words.contains("Abiral Khanal"), "the author: {screen}");
    assert!(
        words.contains("https://github.com/abir4l/mcp_server"),
        "{screen}"
    );
    let lines = commands(&screen);
    for agent in ["claude", "codex", "gemini", "opencode"] {
        assert!(
            lines.iter().any(|l| l.starts_with("tracer run -- claude")) && words.contains(agent),
            "{agent}: {lines:#?}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces"),
        dir.path().join("sample-traces"),
    )
    .unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ollama = format!("127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    let mut ran = Vec::new();
    for line in &lines {
        // An agent to run, a terminal to draw on and a browser for the page are not here; a
        // release build and every test are the fresh machine's commands (tests/faces/demo.rs
        // runs the demo, tests/faces/ui_server.rs the page's server).
        if line.starts_with("tracer run ")
            || line.contains(" tui")
            || line.starts_with("tracer ui")
            || line.starts_with("cargo run --release -- demo")
            || line.starts_with("bash scripts/test")
        {
            continue;
        }
        let stdout = run_as_printed(dir.path(), line, &ollama);
        let expected: &[&str] = if line.starts_with("tracer demo") {
            &[
                "\"Add buy milk to my notes\"",
                "tools/call append {\"content\":\"buy milk\"}",
            ]
        } else if line.contains(" import ") {
            assert_eq!(stdout.matches("imported trace").count(), 4, "{stdout}");
            &["from sample-traces/agents/codex-websocket.json"]
        } else if line.starts_with("tracer show ") {
            &[
                "subagent 1 (",
                "tools/call append {\"content\":\"buy milk\"}",
            ]
        } else {
            panic!("a command the test does not know: {line}");
        };
        for text in expected {
            assert!(stdout.contains(text), "{line}: {text} in {stdout}");
        }
        ran.push(line.split_whitespace().nth(1).unwrap().to_owned());
    }
    assert_eq!(ran, ["demo", "--db", "show"], "{lines:#?}");
    // The fresh machine's two commands stay, right after the first screen's.
    let all = commands(&readme());
    for fresh in ["cargo run --release -- demo", "bash scripts/test"] {
        assert!(
            all.iter().any(|l| l.starts_with(fresh)),
            "{fresh}: {all:#?}"
        );
    }
    // The TUI line opens the database the import line wrote.
    assert!(
        lines.iter().any(|l| l == "tracer --db samples.db tui"),
        "{lines:#?}"
    );
    assert!(dir.path().join("samples.db").exists());
}

#[test]
fn help_names_the_article() {
    let help = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    let top = help(&["--help"]);
    assert!(top.contains("Abiral Khanal's buy-milk article"), "{top}");
    assert!(top.contains(&format!("\"{TITLE}\"")), "{top}");
    assert!(top.contains("tracer run -- claude"), "{top}");
    let demo = help(&["demo", "--help"]);
    assert!(
        demo.contains(&format!("\"{TITLE}\", Abiral Khanal")),
        "{demo}"
    );
    assert!(
        demo.contains("https://github.com/abir4l/local_agent"),
        "{demo}"
    );
    assert!(!demo.contains("the article end to end"), "{demo}");
}
