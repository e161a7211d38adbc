//! `tracer diff` as text: the summary sentence, both runs in a line each, then step by step.

use super::diff::{Diff, StepPair};
use super::steps::{RunView, Step, StepCall};
use tracer_trace::words::{human_duration, plural, shorten};
use tracer_wire::safe_text::one_line;

/// How much of a tool result or reply is shown on one line.
const TEXT_WIDTH: usize = 70;

/// The whole diff as text, summary first.
pub fn render(diff: &Diff) -> String {
    let mut out = format!("{}\n\n", one_line(&diff.summary));
    out.push_str(&run_line("A", &diff.a));
    out.push_str(&run_line("B", &diff.b));
    for pair in diff.steps() {
        out.push('\n');
        out.push_str(&step_block(&pair));
    }
    out.push_str("\nreply");
    let same = diff.a.reply.as_deref().map(str::trim) == diff.b.reply.as_deref().map(str::trim);
    out.push_str(if same { "  (same)\n" } else { "  (differs)\n" });
    for (side, run) in [("A", &diff.a), ("B", &diff.b)] {
        let text = match (&run.reply, &run.agent_error) {
            (_, Some(error)) => format!("error: {}", one_line(error)),
            (Some(reply), None) => format!("\"{}\"", shorten(reply, TEXT_WIDTH)),
            (None, None) => "(none)".to_string(),
        };
        out.push_str(&format!("  {side}  {text}\n"));
    }
    out
}

fn run_line(side: &str, run: &RunView) -> String {
    let mut facts = vec![plural(run.steps.len(), "step")];
    if let Some(total) = run.total_ns {
        facts.push(format!(
            "{} (model {}, tools {})",
            human_duration(total),
            human_duration(run.model_ns()),
            human_duration(run.tool_ns())
        ));
    }
    if let Some(tokens) = run.tokens().text() {
        facts.push(format!("tokens: {tokens}"));
    }
    if let Some(cost) = run.cost().text() {
        facts.push(format!(
            "cost: {} ({})",
            one_line(&cost),
            tracer_trace::account::cost::estimate_label()
        ));
    }
    let title = run
        .title
        .as_deref()
        .map(|t| format!("  \"{}\"", shorten(t, 40)))
        .unwrap_or_default();
    format!(
        "{side}  {}{title}  {}\n",
        one_line(&run.trace),
        facts.join(" · ")
    )
}

fn step_block(pair: &StepPair) -> String {
    let mark = if pair.same_tool_calls {
        "same tool calls"
    } else {
        "tool calls differ"
    };
    let mut out = format!("step {}  ({mark})\n", pair.step);
    for (side, step) in [("A", pair.a), ("B", pair.b)] {
        let Some(step) = step else {
            out.push_str(&format!("  {side}  (no such step)\n"));
            continue;
        };
        out.push_str(&format!("  {side}  {}\n", step_facts(step)));
        if step.calls.is_empty() {
            let said = if step.content.trim().is_empty() {
                "(nothing)".to_string()
            } else {
                format!("\"{}\"", shorten(&step.content, TEXT_WIDTH))
            };
            out.push_str(&format!("       no tool call; says {said}\n"));
        }
        for call in &step.calls {
            out.push_str(&format!("       {}\n", call_line(call)));
        }
    }
    out
}

fn step_facts(step: &Step) -> String {
    let mut facts = vec![
        plural(step.messages, "message"),
        plural(step.tools_offered, "tool") + " offered",
    ];
    if let Some(ns) = step.model_ns {
        facts.push(format!("model {}", human_duration(ns)));
    }
    if step.tool_ns > 0 {
        facts.push(format!("tools {}", human_duration(step.tool_ns)));
    }
    if let Some(tokens) = step.tokens.text() {
        facts.push(format!("tokens: {tokens}"));
    }
    if let Some(cost) = &step.cost {
        facts.push(format!("cost: {}", one_line(&cost.text())));
    }
    if let Some(error) = &step.error {
        facts.push(format!("model error: {}", one_line(error)));
    }
    facts.join(", ")
}

fn call_line(call: &StepCall) -> String {
    let result = match &call.outcome {
        None => "(no tools/call recorded)".to_string(),
        Some(outcome) => {
            let verdict = outcome.error.as_deref().unwrap_or("ok");
            format!("{verdict}: \"{}\"", shorten(&outcome.text, TEXT_WIDTH))
        }
    };
    format!("{} → {result}", shorten(&call.call.display(), TEXT_WIDTH))
}
