//! The agent's own events in the TUI: counted on the diagram row of the message they follow,
//! listed in that message's detail pane (drawn over state, pure), and the view opened before
//! they arrived takes them when they come.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::KeyCode;
use tracer::tui::action::Action;
use tracer::tui::app::AgentNote;

use crate::trace_hops::buy;
use crate::tui::{draw, key, loaded_app, press};

fn screen(app: &mut tracer::tui::app::App) -> String {
    let terminal = draw(app, 110, 40);
    let buffer = terminal.backend().buffer().clone();
    let width = buffer.area.width as usize;
    let cells: Vec<&str> = buffer.content.iter().map(|c| c.symbol()).collect();
    cells
        .chunks(width)
        .map(|row| row.concat())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_agents_own_events_show_after_the_message_they_follow() {
    let mut app = loaded_app();
    press(&mut app, "jj");
    app.update(key(KeyCode::Enter));
    let milk = buy("a", "buy milk", 0);
    let (trace_id, tool_hop) = (milk[0].start.id.clone(), milk[1].start.id.clone());
    app.update(Action::TraceLoaded {
        trace_id: trace_id.clone(),
        title: Some("Add buy milk to my notes".into()),
        hops: milk,
    });
    let before = screen(&mut app);
    assert!(!before.contains("agent's own account"), "{before}");
    app.update(Action::AgentEventsLoaded {
        trace_id: trace_id.clone(),
        notes: vec![
            AgentNote {
                after_hop_id: Some(tool_hop.clone()),
                at_unix_ns: i64::MAX,
                sentence: "Claude Code ran Bash `echo hello` itself: success, 5 B of output, 73 ms"
                    .into(),
                detail: "tool_result · placed by tool call id".into(),
            },
            AgentNote {
                after_hop_id: None,
                at_unix_ns: 0,
                sentence: "Claude Code took the user's prompt: \"Add buy milk\u{1b}[31m\"".into(),
                detail: "user_prompt · placed by prompt id".into(),
            },
        ],
    });
    let view = app.view.as_ref().unwrap();
    let number = view
        .messages
        .iter()
        .filter(|m| m.hop_id == tool_hop)
        .map(|m| m.number)
        .max()
        .unwrap();
    let select = |app: &mut tracer::tui::app::App, number: usize| {
        for _ in 0..40 {
            let now = app.view.as_ref().unwrap().current().unwrap().number;
            match now.cmp(&number) {
                std::cmp::Ordering::Less => press(app, "j"),
                std::cmp::Ordering::Greater => press(app, "k"),
                std::cmp::Ordering::Equal => return,
            };
        }
        panic!("cannot select message {number}");
    };
    select(&mut app, 1);
    let diagram = screen(&mut app);
    assert!(diagram.contains("⋯1 agent"), "{diagram}");
    // The first message lists what came before it, escape sequences shown as text.
    assert!(
        diagram.contains("the agent's own account, before this message"),
        "{diagram}"
    );
    assert!(!diagram.contains('\u{1b}'), "{diagram}");
    // Selecting the message the Bash run follows lists it.
    select(&mut app, number);
    let detail = screen(&mut app);
    assert!(
        detail.contains("the agent's own account, after this message"),
        "{detail}"
    );
    assert!(
        detail.contains("⋯ Claude Code ran Bash `echo hello` itself"),
        "{detail}"
    );
    assert!(
        detail.contains("tool_result · placed by tool call id"),
        "{detail}"
    );
    // Notes for another trace are not this view's.
    app.update(Action::AgentEventsLoaded {
        trace_id: "other".into(),
        notes: Vec::new(),
    });
    assert!(screen(&mut app).contains("after this message"));
}
