//! `tracer show ID --changes`: what changed from each model request of a conversation to the
//! next (the question "what did the harness change between turn 7 and turn 8").

use crate::export::hop_log::HopLog;
use crate::trace::conversation_pairs::{model_calls, request_json};
use crate::trace::request_changes::request_changes;
use crate::trace::{RecordedHop, request_anatomy::human_bytes};
use crate::wire::dialect::HopReading;
use crate::wire::safe_text::one_line;

/// The changes, request by request, under the trace's heading.
pub fn render(log: &HopLog) -> String {
    let trace = log.trace();
    let mut out = format!("trace {}", trace.id);
    if let Some(title) = log.title() {
        out.push_str(&format!("  \"{}\"", one_line(title)));
    }
    out.push_str("  what changed between the model requests of each conversation\n\n");
    let hops = log.recorded_hops();
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let calls = model_calls(&hops, &readings);
    let number = |index: usize| {
        log.messages()
            .iter()
            .find(|m| m.direction == "→" && m.hop_id == hops[index].start.id)
            .map_or(0, |m| m.number)
    };
    if calls.is_empty() {
        out.push_str("no model requests in this trace\n");
    }
    for call in &calls {
        let here = number(call.index);
        let body = request_json(&hops[call.index]);
        let Some(previous) = call.previous.map(|p| &calls[p]) else {
            let size = body.as_ref().map_or(0, |b| b.to_string().len());
            out.push_str(&format!(
                "request {here}: the first of its conversation ({})\n",
                human_bytes(call.request.body_bytes.max(size))
            ));
            continue;
        };
        let before = number(previous.index);
        let changes = match (request_json(&hops[previous.index]), body) {
            (Some(was), Some(is)) => request_changes(&was, &is),
            _ => {
                out.push_str(&format!(
                    "request {here} against request {before}: a body is not JSON\n"
                ));
                continue;
            }
        };
        out.push_str(&format!("request {here} against request {before}:\n"));
        if changes.is_empty() {
            out.push_str("  nothing changed but where the cache marks sit\n");
        }
        for change in changes {
            out.push_str(&format!("  {}\n", one_line(&change.0)));
        }
    }
    out
}
