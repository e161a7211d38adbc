//! The `diff_traces` tool: `tracer diff` for a model. The diff is the compare module's (`Diff`,
//! its summary and its `--json` shape as `structuredContent`); this file only words it compactly.

use super::args::Args;
use super::{TraceServer, answer, lookup_error};
use crate::compare::diff::{Diff, StepPair};
use crate::compare::load::load_stored_run;
use crate::compare::steps::{RunView, Step};
use crate::replay::source::SourceError;
use tracer_trace::words::{human_duration, plural, shorten};
use tracer_wire::mcp::CallToolResult;

/// Characters of a tool call, a tool result or a reply on one line.
const TEXT_CHARS: usize = 60;

impl TraceServer {
    pub(super) async fn diff_traces(&self, args: &Args<'_>) -> Result<CallToolResult, String> {
        let a = args.required_text("a")?;
        let b = args.required_text("b")?;
        let run_a = self.run_view(a).await?;
        let run_b = self.run_view(b).await?;
        let diff = Diff::new(run_a, run_b);
        Ok(answer(render(&diff), diff.to_json()))
    }

    /// One trace read as steps, from the database only (an argument never names a file).
    async fn run_view(&self, id: &str) -> Result<RunView, String> {
        load_stored_run(&self.store, id)
            .await
            .map_err(|error| match error {
                SourceError::Store(error) => lookup_error(id, error),
                SourceError::Empty(trace) => {
                    format!("Trace {trace} has no recorded hops yet; there is nothing to compare")
                }
                other => format!("The trace could not be read: {other}"),
            })
    }
}

/// The summary sentence, a line per run, a line per step and the replies, then what to ask next.
fn render(diff: &Diff) -> String {
    let mut text = format!("{}\n", diff.summary);
    text.push_str(&run_line("A", &diff.a));
    text.push_str(&run_line("B", &diff.b));
    for pair in diff.steps() {
        text.push_str(&step_line(&pair));
    }
    let same_reply =
        diff.a.reply.as_deref().map(str::trim) == diff.b.reply.as_deref().map(str::trim);
    text.push_str(if same_reply {
        "reply same: "
    } else {
        "reply differs: "
    });
    text.push_str(&format!("A {} | B {}\n", reply(&diff.a), reply(&diff.b)));
    text.push_str(&format!(
        "Next: get_trace with id {} (A) or {} (B) for the numbered messages of a run.",
        diff.a.trace, diff.b.trace
    ));
    text
}

/// `A f0de9080… "Add buy milk to my notes": 2 steps, 39 ms (model 5.6 ms, tools 12 ms)`.
fn run_line(side: &str, run: &RunView) -> String {
    let title = run
        .title
        .as_deref()
        .map(|t| format!(" \"{}\"", shorten(t, 40)))
        .unwrap_or_default();
    let time = run.total_ns.map_or(String::new(), |total| {
        format!(
            ", {} (model {}, tools {})",
            human_duration(total),
            human_duration(run.model_ns()),
            human_duration(run.tool_ns())
        )
    });
    format!(
        "{side} {}{title}: {}{time}\n",
        run.trace,
        plural(run.steps.len(), "step")
    )
}

/// `step 1 differs: A append {"content":"buy milk"} → ok | B append {…} → tool error`.
fn step_line(pair: &StepPair) -> String {
    let mark = if pair.same_tool_calls {
        "same calls"
    } else {
        "differs"
    };
    format!(
        "step {} {mark}: A {} | B {}\n",
        pair.step,
        step_text(pair.a),
        step_text(pair.b)
    )
}

fn step_text(step: Option<&Step>) -> String {
    let Some(step) = step else {
        return "(no such step)".to_owned();
    };
    if let Some(error) = &step.error {
        return format!("model error: {}", shorten(error, TEXT_CHARS));
    }
    if step.calls.is_empty() {
        return if step.content.trim().is_empty() {
            "no tool call, says nothing".to_owned()
        } else {
            format!("says \"{}\"", shorten(&step.content, TEXT_CHARS))
        };
    }
    step.calls
        .iter()
        .map(|call| {
            let verdict = match &call.outcome {
                None => "not run".to_owned(),
                Some(outcome) => match &outcome.error {
                    None => "ok".to_owned(),
                    Some(error) => format!("{error}: \"{}\"", shorten(&outcome.text, TEXT_CHARS)),
                },
            };
            format!("{} → {verdict}", shorten(&call.call.display(), TEXT_CHARS))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn reply(run: &RunView) -> String {
    match (&run.reply, &run.agent_error) {
        (_, Some(error)) => format!("error: {}", shorten(error, TEXT_CHARS)),
        (Some(reply), None) => format!("\"{}\"", shorten(reply, TEXT_CHARS)),
        (None, None) => "(none)".to_owned(),
    }
}
