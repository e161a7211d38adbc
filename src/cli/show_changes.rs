//! `tracer show ID --changes`: what changed from each model request of a conversation to the
//! next (the question "what did the harness change between turn 7 and turn 8").

use tracer_export::hop_log::HopLog;
use tracer_trace::read::changes_by_call::changes_by_call;
use tracer_trace::read::request_anatomy::human_bytes;
use tracer_wire::safe_text::one_line;

/// The changes, request by request, under the trace's heading, of a log and its hops as loaded
/// (the log's bodies are not read).
pub fn render_hops(log: &HopLog, hops: &[tracer_trace::RecordedHop]) -> String {
    let trace = log.trace();
    let mut out = format!("trace {}", trace.id);
    if let Some(title) = log.title() {
        out.push_str(&format!("  \"{}\"", one_line(title)));
    }
    out.push_str("  what changed between the model requests of each conversation\n\n");
    let number = |hop: &str| {
        log.messages()
            .iter()
            .find(|m| m.direction == "→" && m.hop_id == hop)
            .map_or(0, |m| m.number)
    };
    // The same facts the TUI's `d` and the html handout show.
    let calls = changes_by_call(hops);
    if calls.is_empty() {
        out.push_str("no model requests in this trace\n");
    }
    for call in &calls {
        let here = number(&call.hop_id);
        let Some(previous) = &call.previous_hop_id else {
            out.push_str(&format!(
                "request {here}: the first of its conversation ({})\n",
                human_bytes(call.body_bytes)
            ));
            continue;
        };
        let before = number(previous);
        if call.changes.is_none() {
            out.push_str(&format!(
                "request {here} against request {before}: a body is not JSON\n"
            ));
            continue;
        }
        out.push_str(&format!("request {here} against request {before}:\n"));
        // The same lines the TUI's `d` and the html handout show.
        for line in call.lines(Some(before)) {
            out.push_str(&format!("  {}\n", one_line(&line)));
        }
    }
    out
}
