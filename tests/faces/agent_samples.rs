//! The coding-agent samples (sample-traces/agents/: Claude Code with a subagent, Codex over a
//! WebSocket, Gemini CLI, opencode, recorded from the npm packages) open as a newcomer opens
//! them: `tracer import` all four at once, `tracer ls`, `tracer show` with the user's words, the
//! tool call to append, the subagent and the WebSocket turns; in the TUI (insta snapshots of
//! each trace view); and nothing the agents were given as a key is left in them.

use std::path::{Path, PathBuf};
use std::process::Command;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::keymap::Screen;
use tracer::tui::view;
use tracer_export::hop_log::HopLog;

use crate::sample_db::TRACER;

const SAMPLES: [&str; 4] = [
    "claude-code-subagent",
    "codex-websocket",
    "gemini-cli",
    "opencode",
];

fn sample_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("sample-traces/agents/{name}.json"))
}

fn tracer(db: &Path, args: &[&str]) -> String {
    let output = Command::new(TRACER)
        .env_remove("TRACER_DB")
        .env("NO_COLOR", "1")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "tracer {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn trace_id(name: &str) -> String {
    let log = HopLog::from_json(&std::fs::read(sample_path(name)).unwrap()).unwrap();
    log.trace_id().to_owned()
}

/// The lines of `tracer show ID` that start a message (`  N → …` / `  N ← …`).
fn message_lines(shown: &str) -> Vec<&str> {
    shown
        .lines()
        .filter(|line| {
            let rest = line.trim_start();
            rest.split_once(' ').is_some_and(|(number, after)| {
                number.parse::<u32>().is_ok() && (after.starts_with('→') || after.starts_with('←'))
            })
        })
        .collect()
}

fn has(lines: &[&str], parts: &[&str]) -> bool {
    lines
        .iter()
        .any(|line| parts.iter().all(|p| line.contains(p)))
}

#[test]
fn the_agent_samples_import_list_and_show_their_key_lines() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let files: Vec<String> = SAMPLES
        .iter()
        .map(|name| sample_path(name).display().to_string())
        .collect();
    let mut import = vec!["import"];
    import.extend(files.iter().map(String::as_str));
    let imported = tracer(&db, &import);
    assert_eq!(imported.lines().count(), 4, "{imported}");
    let listed = tracer(&db, &["ls"]);
    for name in SAMPLES {
        let id = trace_id(name);
        let line = listed
            .lines()
            .find(|l| l.starts_with(&id[..8]))
            .unwrap_or_else(|| panic!("{name} in ls: {listed}"));
        assert!(
            line.contains(" ok ") && line.contains("append"),
            "{name}: {line}"
        );
        assert!(line.ends_with("\"Add buy milk to my notes\""), "{line}");
    }

    let shown = |name: &str| tracer(&db, &["show", &trace_id(name)]);
    let claude = shown("claude-code-subagent");
    assert!(
        claude.starts_with(&format!(
            "trace {}  \"Add buy milk to my notes\"",
            trace_id("claude-code-subagent")
        )),
        "{claude}"
    );
    assert!(claude.contains("the user's words: \"Add buy milk to my notes\""));
    let lines = message_lines(&claude);
    assert_eq!(lines.len(), 10, "{lines:#?}");
    assert!(
        has(&lines, &["2 ← model → agent", "asks for tool Agent"]),
        "{lines:#?}"
    );
    assert!(
        has(
            &lines,
            &[
                "4 ← model → agent",
                "subagent 1 (Add the note, asked in message 2)",
                "asks for tool mcp__notes__append {\"content\":\"buy milk\"}"
            ]
        ),
        "{lines:#?}"
    );
    assert!(
        has(
            &lines,
            &[
                "5 → agent → notes",
                "tools/call append {\"content\":\"buy milk\"}"
            ]
        ),
        "{lines:#?}"
    );
    assert!(
        has(&lines, &["10 ← model → agent", "the model answers: \"Done"]),
        "{lines:#?}"
    );

    let codex = shown("codex-websocket");
    assert!(codex.contains("the user's words: \"Add buy milk to my notes\""));
    let lines = message_lines(&codex);
    assert!(
        has(
            &lines,
            &["GET /v1/responses", "asks to switch to a WebSocket"]
        ),
        "{lines:#?}"
    );
    let turns: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("→ agent → model  WS /v1/responses  gpt-5-codex"))
        .collect();
    assert_eq!(
        turns.len(),
        3,
        "three Responses turns over the socket: {lines:#?}"
    );
    assert!(
        has(&lines, &["tools/call append {\"content\":\"buy milk\"}"]),
        "{lines:#?}"
    );
    assert!(
        has(&lines, &["← model → agent  101  WebSocket: 3 messages"]),
        "{lines:#?}"
    );

    let gemini = shown("gemini-cli");
    assert!(gemini.contains("the user's words: \"Add buy milk to my notes\""));
    let lines = message_lines(&gemini);
    assert!(
        has(
            &lines,
            &["→ agent → model  POST /v1beta/models/gemini-3.8-flash:streamGenerateContent"]
        ),
        "{lines:#?}"
    );
    assert!(
        has(
            &lines,
            &[
                "← model → agent",
                "asks for tool mcp_notes_append {\"content\":\"buy milk\"}"
            ]
        ),
        "{lines:#?}"
    );
    assert!(
        has(
            &lines,
            &[
                "tools/call append {\"content\":\"buy milk\"}",
                "as mcp_notes_append"
            ]
        ),
        "{lines:#?}"
    );

    let opencode = shown("opencode");
    assert!(opencode.contains("the user's words: \"\"Add buy milk to my notes\"\""));
    let lines = message_lines(&opencode);
    assert!(
        has(
            &lines,
            &[
                "tools/call append {\"content\":\"buy milk\"}",
                "as notes_append"
            ]
        ),
        "{lines:#?}"
    );
    assert!(
        has(
            &lines,
            &["the model answers: \"Done: I added \"buy milk\" to your notes.\""]
        ),
        "{lines:#?}"
    );
}

#[test]
fn the_agent_samples_hold_no_key_the_agents_were_given() {
    // tests/interop/agents/agent_setups.py: the keys each agent ran with.
    let given = [
        "sk-test-fake-key-for-the-scripted-upstream-0000",
        "sk-ant-test-fake-key",
        "test-fake-gemini-key",
    ];
    for name in SAMPLES {
        let text = std::fs::read_to_string(sample_path(name)).unwrap();
        for key in given {
            assert!(!text.contains(key), "{name} holds {key}");
        }
        assert!(
            text.contains("[redacted]"),
            "{name}: recorded with redaction on"
        );
        let size = text.len();
        assert!(size < 400_000, "{name} is {size} bytes");
    }
}

/// The sample open in the TUI's trace view at 120×34, message `select` selected.
fn trace_view(name: &str, select: usize) -> Terminal<TestBackend> {
    let log = HopLog::from_json(&std::fs::read(sample_path(name)).unwrap()).unwrap();
    let mut app = App::browser("tracer.db");
    app.update(Action::TraceLoaded {
        trace_id: log.trace_id().to_owned(),
        title: log.title().map(str::to_owned),
        hops: log.recorded_hops(),
    });
    assert_eq!(app.mode, Screen::Trace);
    for _ in 1..select {
        app.update(Action::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('j'),
            crossterm::event::KeyModifiers::NONE,
        )));
    }
    let mut terminal = Terminal::new(TestBackend::new(120, 34)).unwrap();
    terminal
        .draw(|frame| view::render(&mut app, frame))
        .unwrap();
    terminal
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
    format!("{:?}", terminal.backend())
}

#[test]
fn the_agent_samples_open_in_the_tui() {
    // Claude Code: the subagent's tool call selected.
    let claude = trace_view("claude-code-subagent", 4);
    assert!(
        screen(&claude).contains("subagent 1"),
        "{}",
        screen(&claude)
    );
    insta::assert_snapshot!("claude_code_subagent_120x34", claude.backend());
    // Codex: its first Responses turn over the WebSocket.
    let codex = trace_view("codex-websocket", 6);
    assert!(
        screen(&codex).contains("WS /v1/responses"),
        "{}",
        screen(&codex)
    );
    insta::assert_snapshot!("codex_websocket_120x34", codex.backend());
    // Gemini CLI and opencode: the tool call.
    let gemini = trace_view("gemini-cli", 5);
    assert!(
        screen(&gemini).contains("tools/call append"),
        "{}",
        screen(&gemini)
    );
    insta::assert_snapshot!("gemini_cli_120x34", gemini.backend());
    let opencode = trace_view("opencode", 12);
    assert!(
        screen(&opencode).contains("tools/call append"),
        "{}",
        screen(&opencode)
    );
    insta::assert_snapshot!("opencode_120x34", opencode.backend());
}
