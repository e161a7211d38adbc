//! MCP in the faces: a wrapped server's stderr beside its messages in `tracer show` and in the
//! TUI's detail pane, and base64 (an image's data) folded to its size in the TUI and in the
//! Markdown handout. The trace is the recorded MCP tour (tests/fixtures/mcp-tour/stdio.json).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::view;
use tracer_export::hop_log::HopLog;

fn tour_fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-tour/stdio.json")
}

fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        for x in 0..area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn replay_app() -> App {
    let log = HopLog::from_file(&std::fs::read(tour_fixture()).unwrap()).unwrap();
    let trace = crate::trace_hops::loaded(log.trace_id(), None, log.recorded_hops());
    let mut app = App::replay("stdio.json", trace, 1.0);
    assert!(app.start().is_empty());
    app
}

fn step_to(app: &mut App, number: usize) {
    for _ in 1..number {
        app.update(Action::Key(KeyEvent::new(
            KeyCode::Char(' '),
            KeyModifiers::NONE,
        )));
    }
    let current = app.view.as_ref().unwrap().current().unwrap().number;
    assert_eq!(current, number);
}

fn draw(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(140, 120)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    screen_text(&terminal)
}

#[test]
fn the_tui_shows_the_servers_stderr_under_the_message_it_came_before() {
    let mut app = replay_app();
    let view = app.view.as_ref().unwrap();
    let trace_id = view.trace_id.clone();
    // Logged between message 1 (server/discover) and message 2 (its answer), as recorded.
    let at = (view.messages[0].at_unix_ns + view.messages[1].at_unix_ns) / 2;
    app.update(Action::StderrLoaded {
        trace_id,
        lines: vec![(
            "everything".into(),
            at,
            "Starting default (STDIO) server...\u{1b}[2J".into(),
        )],
    });
    let first = draw(&mut app);
    assert!(
        !first.contains("server stderr"),
        "not under message 1:\n{first}"
    );
    step_to(&mut app, 2);
    let second = draw(&mut app);
    assert!(second.contains("server stderr (everything)"), "{second}");
    assert!(
        second.contains("Starting default (STDIO) server...\\x1b[2J"),
        "made safe: {second}"
    );
}

#[test]
fn the_tui_and_the_handout_fold_an_images_base64_to_its_size() {
    let mut app = replay_app();
    let image = app
        .view
        .as_ref()
        .unwrap()
        .messages
        .iter()
        .find(|m| m.summary.contains("an image (image/png, 4.0 kB)"))
        .unwrap()
        .number;
    step_to(&mut app, image);
    let screen = draw(&mut app);
    assert!(screen.contains("<base64, 4.0 kB>"), "{screen}");
    assert!(!screen.contains("iVBORw0KGgo"), "{screen}");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tour.md");
    let status = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["export", "--format", "md", "-o"])
        .arg(&out)
        .arg(tour_fixture())
        .status()
        .unwrap();
    assert!(status.success());
    let handout = std::fs::read_to_string(&out).unwrap();
    assert!(handout.contains("<base64, 4.0 kB>"), "the image is folded");
    assert!(
        !handout.contains("iVBORw0KGgo"),
        "no PNG base64 in the handout"
    );
}

#[test]
fn show_prints_a_wrapped_servers_stderr_among_its_messages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let server = r#"echo "server starting" >&2; while read -r line; do echo "handling a request" >&2; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; done"#;
    let mut wrap = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .args(["wrap", "--name", "fake", "--", "sh", "-c", server])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = wrap.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(stdin);
    assert!(wrap.wait_with_output().unwrap().status.success());
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let listed: serde_json::Value = serde_json::from_str(&run(&["ls", "--json"])).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_string();
    let show = run(&["show", &id]);
    assert!(show.contains("! stderr of fake  server starting"), "{show}");
    assert!(
        show.contains("! stderr of fake  handling a request"),
        "{show}"
    );
    assert!(
        show.contains("1 → agent → fake  ping client→server  ping"),
        "{show}"
    );
    assert!(show.contains("pong (to 1)"), "{show}");
}
