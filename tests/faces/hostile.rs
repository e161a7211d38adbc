//! Hostile recorded content through every face: model text, a tool result, a tool name and a
//! title carrying OSC 52, a CSI clear, BEL, C1 CSI and U+202E reach `ls`, `show`, `replay
//! --plain`, `diff`, `export` (md, mermaid, html, json) and the TUI only as visible escapes;
//! the Markdown handout and the Mermaid diagram carry no live HTML, heading or directive.

use std::path::{Path, PathBuf};
use std::process::Command;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use tracer::tui::app::App;
use tracer::tui::view;
use tracer_export::hop_log::HopLog;
use tracer_wire::safe_text::is_unsafe;

use crate::sample_db::{BUY_MILK, TRACER};

/// Model text (the item the user asks for, and so the model's reply): clipboard write, screen
/// clear, bell, an 8-bit CSI and a right-to-left override.
pub const ITEM: &str = "milk\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2J\u{1b}[H\u{9b}31m\u{202e}txt.exe";
/// A tool name that would show as `append` then `txt.exe` reversed, and retitle the terminal.
pub const TOOL: &str = "append\u{202e}exe.txt\u{1b}]0;owned\u{7}";
/// A tool result with terminal codes, a Mermaid directive that fetches a URL, and HTML.
pub const RESULT: &str = "Appended\u{1b}[2J\u{7} %%{init: {'themeCSS': '.note{background:url(http://127.0.0.1:9/x)}'}}%% <img src=x onerror=alert(1)>";
/// The trace's title: a newline-injected heading and HTML.
pub const TITLE: &str =
    "Add milk\u{1b}]52;c;cHduZWQ=\u{7}\n# Forged heading\n<img src=x onerror=alert(1)>";

/// The hostile trace's id: the sample's with `0bad` for its first four digits (its hops'
/// ids too), so the hostile trace and the sample can sit in one database.
pub const HOSTILE_ID: &str = "0bad9080c655d264f0fe0380c6b54c51";

/// The buy-milk sample with every string made hostile (bodies' lengths grown to fit).
pub fn hostile_log() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces/buy-milk.json");
    let mut log: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let ids: Vec<String> = log["hops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hop| hop["id"].as_str().unwrap().to_string())
        .collect();
    poison(&mut log, &ids);
    assert_eq!(log["trace"]["id"], HOSTILE_ID);
    log["trace"]["title"] = Value::from(TITLE);
    log
}

fn poison(value: &mut Value, ids: &[String]) {
    match value {
        Value::String(text) => {
            for id in ids {
                if text.contains(id.as_str()) {
                    *text = text.replace(id.as_str(), &format!("0bad{}", &id[4..]));
                }
            }
            if text == "append" {
                *text = TOOL.to_string();
            } else if text.starts_with("Appended a new line") {
                *text = RESULT.to_string();
            } else if text.contains("buy milk") {
                *text = text.replace("buy milk", ITEM);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| poison(item, ids)),
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if key == "length" && item.is_u64() {
                    *item = Value::from(1_000_000);
                } else {
                    poison(item, ids);
                }
            }
        }
        _ => {}
    }
}

/// `DIR/hostile.json` and `DIR/tracer.db` holding the hostile trace and the buy-milk sample.
pub fn hostile_db(dir: &Path) -> (PathBuf, PathBuf) {
    let file = dir.join("hostile.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&hostile_log()).unwrap()).unwrap();
    let db = dir.join("tracer.db");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces/buy-milk.json");
    for source in [&file, &sample] {
        let output = tracer(&db).arg("import").arg(source).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        // What `import` says is one line, whatever the title holds.
        let said = String::from_utf8(output.stdout).unwrap();
        assert_no_raw_controls("import", &said);
        assert_eq!(said.lines().count(), 1, "{said}");
    }
    (file, db)
}

fn tracer(db: &Path) -> Command {
    let mut command = Command::new(TRACER);
    command.arg("--db").arg(db).env("NO_COLOR", "1");
    command
}

fn stdout(db: &Path, args: &[&str]) -> String {
    let output = tracer(db).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// Fails when `text` holds a control or bidi character other than a newline (or a tab, for
/// multi-line faces) as it is.
#[track_caller]
pub fn assert_no_raw_controls(face: &str, text: &str) {
    let raw: Vec<String> = text
        .chars()
        .filter(|&c| is_unsafe(c) && c != '\n' && c != '\t')
        .map(|c| format!("U+{:04X}", u32::from(c)))
        .collect();
    assert!(raw.is_empty(), "{face} printed {raw:?} as it is:\n{text}");
}

#[test]
fn text_faces_show_hostile_content_as_visible_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let (file, db) = hostile_db(dir.path());
    let file = file.to_str().unwrap();
    // (face, its arguments, whether it prints the hostile text at all)
    let faces: Vec<(&str, Vec<&str>, bool)> = vec![
        ("ls", vec!["ls"], true),
        ("ls --hops", vec!["ls", "--hops"], false),
        ("show", vec!["show", HOSTILE_ID], true),
        (
            "replay --plain",
            vec!["replay", HOSTILE_ID, "--plain"],
            true,
        ),
        ("replay FILE --plain", vec!["replay", file, "--plain"], true),
        ("diff", vec!["diff", BUY_MILK, HOSTILE_ID], true),
        ("export md", vec!["export", HOSTILE_ID, "-f", "md"], true),
        (
            "export mermaid",
            vec!["export", HOSTILE_ID, "-f", "mermaid"],
            true,
        ),
        (
            "export html",
            vec!["export", HOSTILE_ID, "-f", "html"],
            true,
        ),
    ];
    for (face, args, shows) in faces {
        let text = stdout(&db, &args);
        assert_no_raw_controls(face, &text);
        // Shown, not dropped: the escapes are there to read.
        assert!(
            !shows || text.contains("\\x1b]52"),
            "{face} does not show the OSC 52 as an escape:\n{text}"
        );
    }
    // Tool names and titles too, where the face prints them.
    let ls = stdout(&db, &["ls"]);
    assert!(ls.contains("append\\u{202e}"), "{ls}");
    let show = stdout(&db, &["show", HOSTILE_ID]);
    assert!(
        show.contains("tools: append\\u{202e}exe.txt\\x1b]0;owned\\x07"),
        "{show}"
    );
    // A title is one line (its line breaks are spaces): nothing forges a line of its own.
    assert!(!show.lines().any(|l| l.starts_with("# Forged")), "{show}");
    assert!(
        show.lines()
            .next()
            .unwrap()
            .contains("\\x07 # Forged heading"),
        "{show}"
    );
}

#[test]
fn json_on_stdout_escapes_c1_and_bidi_controls_and_reads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (file, db) = hostile_db(dir.path());
    for args in [
        vec!["ls", "--json"],
        vec!["ls", "--hops", "--json"],
        vec!["show", HOSTILE_ID, "--json"],
        vec!["export", HOSTILE_ID, "-f", "json"],
        vec!["export", HOSTILE_ID, "-f", "har"],
        vec!["export", HOSTILE_ID, "-f", "otlp"],
        vec!["diff", BUY_MILK, HOSTILE_ID, "--json"],
    ] {
        let text = stdout(&db, &args);
        assert_no_raw_controls(&args.join(" "), &text);
        serde_json::from_str::<Value>(&text).unwrap();
    }
    // The hop log on stdout is the same value as the file it was imported from.
    let shown: Value = serde_json::from_str(&stdout(&db, &["show", HOSTILE_ID, "--json"])).unwrap();
    let imported: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    assert_eq!(shown["trace"]["title"], imported["trace"]["title"]);
    assert_eq!(shown["trace"]["tools_used"], Value::from(vec![TOOL]));
}

#[test]
fn the_markdown_handout_carries_no_live_html_and_no_injected_heading() {
    let dir = tempfile::tempdir().unwrap();
    let (_, db) = hostile_db(dir.path());
    let out = dir.path().join("handout.md");
    let args = [
        "export",
        HOSTILE_ID,
        "-f",
        "md",
        "-o",
        out.to_str().unwrap(),
    ];
    stdout(&db, &args);
    let md = std::fs::read_to_string(&out).unwrap();
    assert_no_raw_controls("handout file", &md);
    let mut headings = md.lines().filter(|l| l.starts_with("# "));
    let title = headings.next().unwrap();
    assert!(headings.next().is_none(), "one top heading only:\n{md}");
    assert!(title.contains("Forged heading"), "{title}");
    // Outside code fences (where a renderer shows text as it is), no tag can open.
    let mut fenced = false;
    for line in md.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let bare = line.replace("\\<", "");
            assert!(!bare.contains('<'), "a raw `<` outside code: {line}");
        }
    }
    assert!(md.contains("\\<img src=x onerror=alert(1)\\>"), "{md}");
}

#[test]
fn mermaid_labels_carry_no_directive_and_cannot_leave_their_arrow() {
    let dir = tempfile::tempdir().unwrap();
    let (_, db) = hostile_db(dir.path());
    let diagram = stdout(&db, &["export", HOSTILE_ID, "-f", "mermaid"]);
    assert!(diagram.starts_with("sequenceDiagram\n"), "{diagram}");
    for line in diagram.lines().skip(1) {
        let line = line.trim_start();
        if line.starts_with("participant ") {
            continue;
        }
        let (arrow, label) = line.split_once(": ").unwrap();
        assert!(arrow.contains("->>"), "a line that is not an arrow: {line}");
        let text = without_entities(label);
        for forbidden in ['%', '<', '>', '&', ';'] {
            assert!(!text.contains(forbidden), "{forbidden} in {line}");
        }
    }
    assert!(
        diagram.contains("themeCSS"),
        "the text itself is kept: {diagram}"
    );
    // The handout's own mermaid block is the same diagram.
    let md = stdout(&db, &["export", HOSTILE_ID, "-f", "md"]);
    assert!(md.contains(&diagram), "{md}");
}

/// A Mermaid label with its entity codes (`#123;`) taken out.
fn without_entities(label: &str) -> String {
    let mut out = String::new();
    let mut rest = label;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(';') {
            rest = &after[digits + 1..];
        } else {
            out.push('#');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Every cell of a drawn screen, as text.
fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut text = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

#[test]
fn the_tui_shows_hostile_titles_tools_and_bodies_as_escapes() {
    use tracer::tui::action::{Action, PollToken};
    use tracer::tui::facts::TraceFacts;

    let log = HopLog::from_json(&serde_json::to_vec(&hostile_log()).unwrap()).unwrap();
    let trace = log.loaded();
    let hops = trace.hops.clone();
    // Every message of the trace, one after another, with its details and body.
    let mut app = App::replay("hostile.json", trace, 1.0);
    let mut seen = String::new();
    for _ in 0..log.messages().len() {
        let drawn = screen(&mut app);
        assert_no_raw_controls("the trace view", &drawn);
        seen.push_str(&drawn);
        app.update(Action::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Right,
            crossterm::event::KeyModifiers::NONE,
        )));
    }
    assert!(seen.contains("\\u{202e}"), "{seen}");
    assert!(seen.contains("\\x1b]52;c;cHduZWQ="), "{seen}");

    // The list: the title and the tools column.
    let mut app = App::browser("tracer.db");
    app.start();
    let row = tracer_store::traces::TraceRow {
        id: HOSTILE_ID.into(),
        title: Some(TITLE.into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: None,
        created_by: "import".into(),
    };
    app.update(Action::TracesLoaded {
        rows: vec![row],
        token: PollToken::default(),
        partial: false,
        sessions: Default::default(),
    });
    app.update(Action::FactsLoaded(
        [(HOSTILE_ID.to_string(), TraceFacts::of(&hops))].into(),
    ));
    let list = screen(&mut app);
    assert_no_raw_controls("the trace list", &list);
    assert!(list.contains("Add milk\\x1b]52"), "{list}");
}
