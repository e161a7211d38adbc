//! The TUI's timing view: `t` on a trace puts the waterfall in the sequence diagram's place
//! (bars drawn to the terminal's width, the stream's first chunk marked, Ollama's durations after
//! the model bars) and `t` again brings the diagram back; an insta snapshot at 80x24.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::keymap::{self, Screen};
use tracer::tui::view;
use tracer_export::hop_log::HopLog;

fn key(app: &mut App, c: char) {
    app.update(Action::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )));
}

fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    terminal
}

/// The streamed sample (Ollama NDJSON with chunk timing) open in the trace view.
fn streamed_trace() -> App {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/sample-traces/streamed-ndjson.json"
    );
    let log = HopLog::from_json(&std::fs::read(path).unwrap()).unwrap();
    let mut app = App::browser("tracer.db");
    app.update(Action::TraceLoaded {
        trace_id: log.trace_id().to_owned(),
        title: log.title().map(str::to_owned),
        hops: log.recorded_hops(),
    });
    assert_eq!(app.mode, Screen::Trace);
    app
}

#[test]
fn t_switches_the_diagram_for_the_timing_view_and_back() {
    let mut app = streamed_trace();
    key(&mut app, 'j');
    key(&mut app, 'j');
    key(&mut app, 'j');
    key(&mut app, 't');
    assert!(app.view.as_ref().unwrap().show_timing);
    let terminal = draw(&mut app, 80, 24);
    insta::assert_snapshot!("timing_80x24", terminal.backend());
    let buffer = terminal.backend().buffer();
    let row = |y: u16| {
        (0..80)
            .map(|x| buffer[(x, y)].symbol().to_owned())
            .collect::<String>()
    };
    assert!(row(1).starts_with("timing  model "), "{}", row(1));
    let model_row = (3..10)
        .find(|&y| row(y).contains("agent → ollama"))
        .unwrap();
    assert!(
        row(model_row).contains('┃'),
        "the first chunk is marked: {}",
        row(model_row)
    );
    let magenta = (0..80).any(|x| buffer[(x, model_row)].fg == Color::Magenta);
    assert!(magenta, "model time is magenta");
    // The bars use the width: the host's bar spans the plot.
    let host = row(3);
    assert!(host.matches('█').count() > 40, "{host}");
    // Wider terminals draw longer bars.
    let wide = draw(&mut app, 120, 24);
    let wide_host: String = (0..120)
        .map(|x| wide.backend().buffer()[(x, 3)].symbol().to_owned())
        .collect();
    assert!(wide_host.matches('█').count() > host.matches('█').count());
    let last_model = (3..10)
        .rev()
        .find(|&y| row(y).contains("agent → ollama"))
        .unwrap();
    assert!(
        row(last_model).contains('▓') && row(2).starts_with("░load ▒prompt ▓gen"),
        "Ollama's reported time is shaded: {}",
        row(last_model)
    );

    key(&mut app, 't');
    assert!(!app.view.as_ref().unwrap().show_timing);
    let diagram = draw(&mut app, 80, 24);
    let top: String = (0..80)
        .map(|x| diagram.backend().buffer()[(x, 1)].symbol().to_owned())
        .collect();
    assert!(
        top.contains("you") && top.contains("agent"),
        "the diagram is back: {top}"
    );
}

#[test]
fn t_is_in_the_keymap_and_the_help_of_the_trace_and_the_replay() {
    for mode in [Screen::Trace, Screen::Replay] {
        let binding = keymap::bindings(mode)
            .find(|b| b.label == "t")
            .expect("t is bound");
        assert!(binding.help.contains("timing"));
    }
    let mut app = streamed_trace();
    key(&mut app, '?');
    let terminal = draw(&mut app, 80, 24);
    let screen: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|cell| cell.symbol())
        .collect();
    assert!(
        screen.contains("timing waterfall instead of the diagram"),
        "the help lists t"
    );
}
