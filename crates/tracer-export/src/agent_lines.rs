//! The agent's own events in the handouts: the lines of those that follow a message, in
//! Markdown (a quote under the message) and in HTML (a note between the messages), as text.

use crate::hop_log::AgentEventEntry;

/// The log events placed after message `after` (None: before the first). Spans and metric
/// points stay in the hop log.
fn after(
    events: &[AgentEventEntry],
    after: Option<usize>,
) -> impl Iterator<Item = &AgentEventEntry> {
    events
        .iter()
        .filter(move |e| e.after_message == after && e.signal == "log")
}

/// `> ⋯ agent: …` lines, one paragraph each, their text made Markdown-safe by `text`.
pub(crate) fn markdown(
    events: &[AgentEventEntry],
    at: Option<usize>,
    text: fn(&str) -> String,
) -> String {
    let mut out = String::new();
    for event in after(events, at) {
        out.push_str(&format!(
            "> ⋯ **the agent's own account:** {} *({}, placed by {})*\n",
            text(&event.sentence),
            text(&event.name),
            text(&event.rule)
        ));
        if let Some(check) = &event.cost_check {
            out.push_str(&format!(">\n> Cost: {}\n", text(check)));
        }
        out.push('\n');
    }
    out
}

/// `<p class="agent-event">` notes, their text escaped by `escape`.
pub(crate) fn html(
    events: &[AgentEventEntry],
    at: Option<usize>,
    escape: fn(&str) -> String,
) -> String {
    let mut out = String::new();
    for event in after(events, at) {
        out.push_str(&format!(
            "<p class=\"agent-event\" data-after=\"{}\"><span class=\"badge\">agent</span> {} <span class=\"muted\">({}, placed by {}){}</span></p>\n",
            at.map_or_else(String::new, |n| n.to_string()),
            escape(&event.sentence),
            escape(&event.name),
            escape(&event.rule),
            event.cost_check.as_deref().map_or_else(String::new, |c| format!(" · {}", escape(c)))
        ));
    }
    out
}
