//! The TUI's `/body:` search through its update function: enter asks for the search, its answer
//! filters the list (snapshot), and the filter bar's ctrl-u and ctrl-w.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tracer::tui::action::{Action, Effect};

use crate::tui::{draw, key, loaded_app, press, traces};

#[test]
fn body_search_results_and_the_line_keys() {
    let mut app = loaded_app();
    press(&mut app, "/body:Appended");
    assert!(
        !app.list.shown.is_empty() || app.list.undecided > 0,
        "typing does not search yet"
    );
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        effects.contains(&Effect::Search("Appended".into())),
        "{effects:?}"
    );
    let waiting = format!("{:?}", draw(&mut app, 80, 24).backend());
    assert!(
        waiting.contains("Searching titles, messages and bodies"),
        "{waiting}"
    );
    // The search answers: only buy milk holds the text (in its tool result).
    let milk = traces()[2].0.id.clone();
    app.update(Action::SearchDone {
        text: "Appended".into(),
        traces: [milk.clone()].into(),
    });
    let shown: Vec<&str> = app
        .list
        .shown
        .iter()
        .map(|&i| app.list.rows[i].id.as_str())
        .collect();
    assert_eq!(shown, [milk.as_str()]);
    insta::assert_snapshot!("search_results_80x24", draw(&mut app, 80, 24).backend());

    // In the filter bar, ctrl-w deletes a word and ctrl-u the line (not typed as `w`, `u`).
    let ctrl = |c| Action::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    press(&mut app, "/");
    app.update(ctrl('w'));
    assert_eq!(app.filter_input, "");
    press(&mut app, "tool:append milk");
    app.update(ctrl('w'));
    assert_eq!(app.filter_input, "tool:append ");
    app.update(ctrl('u'));
    assert_eq!(app.filter_input, "");
    assert_eq!(
        app.list.shown.len(),
        3,
        "the cleared filter shows every trace"
    );
}
