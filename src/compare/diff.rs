//! Two runs lined up step by step: what changed, a one-sentence summary, and the `--json` shape.

use serde::Serialize;
use serde_json::{Value, json};

use super::steps::{Call, RunView, Step};
use tracer_trace::words::plural;

/// Two traces compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    pub a: RunView,
    pub b: RunView,
    pub summary: String,
    pub same_tool_calls: bool,
}

/// One step of each side, aligned by position.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepPair<'a> {
    pub step: usize,
    pub a: Option<&'a Step>,
    pub b: Option<&'a Step>,
    pub same_tool_calls: bool,
}

impl Diff {
    pub fn new(a: RunView, b: RunView) -> Self {
        let same_tool_calls = a.calls() == b.calls();
        let summary = summarize(&a, &b, same_tool_calls);
        Self {
            a,
            b,
            summary,
            same_tool_calls,
        }
    }

    /// The steps side by side; the shorter run has `None` past its end.
    pub fn steps(&self) -> Vec<StepPair<'_>> {
        let count = self.a.steps.len().max(self.b.steps.len());
        (0..count)
            .map(|i| {
                let (a, b) = (self.a.steps.get(i), self.b.steps.get(i));
                let calls = |s: Option<&Step>| {
                    s.map(|s| s.calls.iter().map(|c| c.call.clone()).collect::<Vec<_>>())
                };
                StepPair {
                    step: i + 1,
                    a,
                    b,
                    same_tool_calls: calls(a) == calls(b),
                }
            })
            .collect()
    }

    /// Where the runs part: the first step whose tool calls, tool results, text or error differ
    /// (or that one run lacks), with what differs there; None when every step is the same.
    pub fn parts_at(&self) -> Option<(usize, &'static str)> {
        self.steps().iter().find_map(|pair| {
            let what = match (pair.a, pair.b) {
                (Some(a), Some(b)) => {
                    let outcomes = |s: &Step| {
                        (s.calls.iter())
                            .map(|c| {
                                c.outcome
                                    .as_ref()
                                    .map(|o| (o.text.clone(), o.error.clone()))
                            })
                            .collect::<Vec<_>>()
                    };
                    if !pair.same_tool_calls {
                        "the tool calls differ"
                    } else if outcomes(a) != outcomes(b) {
                        "a tool result differs"
                    } else if a.error != b.error {
                        "the model call's error differs"
                    } else if a.content != b.content {
                        "the model's text differs"
                    } else {
                        return None;
                    }
                }
                (Some(_), None) => "only A has it",
                (None, Some(_)) => "only B has it",
                (None, None) => return None,
            };
            Some((pair.step, what))
        })
    }

    /// `{"a", "b", "summary", "same_tool_calls", "tool_calls_a", "tool_calls_b", "reply_a",
    /// "reply_b", "steps"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "a": self.a.trace,
            "b": self.b.trace,
            "summary": self.summary,
            "same_tool_calls": self.same_tool_calls,
            "tool_calls_a": self.a.calls(),
            "tool_calls_b": self.b.calls(),
            "reply_a": self.a.reply,
            "reply_b": self.b.reply,
            "steps": self.steps(),
        })
    }
}

fn names(calls: &[Call]) -> String {
    if calls.is_empty() {
        return "none".to_string();
    }
    calls
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn same_text(a: Option<&str>, b: Option<&str>) -> bool {
    a.map(str::trim) == b.map(str::trim)
}

/// `same tools and arguments; the reply differs; B took 2.1× as long`.
pub fn summarize(a: &RunView, b: &RunView, same_tool_calls: bool) -> String {
    let (calls_a, calls_b) = (a.calls(), b.calls());
    let mut parts = Vec::new();
    let names_of = |calls: &[Call]| calls.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    if same_tool_calls && calls_a.is_empty() {
        parts.push("no tool calls on either side".to_string());
    } else if same_tool_calls {
        parts.push("same tools and arguments".to_string());
    } else if names_of(&calls_a) == names_of(&calls_b) {
        parts.push("same tools, different arguments".to_string());
    } else {
        parts.push(format!(
            "different tools (A: {}; B: {})",
            names(&calls_a),
            names(&calls_b)
        ));
    }
    if a.steps.len() != b.steps.len() {
        parts.push(format!(
            "{} in A, {} in B",
            plural(a.steps.len(), "step"),
            b.steps.len()
        ));
    }
    let errors = (a.tool_errors().len(), b.tool_errors().len());
    match errors {
        (x, y) if x == y => {
            if same_tool_calls && results(a) != results(b) {
                parts.push("a tool result differs".to_string());
            }
        }
        (0, y) => parts.push(format!("B got {}", plural(y, "tool error"))),
        (x, 0) => parts.push(format!("A got {}", plural(x, "tool error"))),
        (x, y) => parts.push(format!("tool errors: {x} in A, {y} in B")),
    }
    match (a.step_limit_reached, b.step_limit_reached) {
        (false, true) => parts.push("B hit the step limit".to_string()),
        (true, false) => parts.push("A hit the step limit".to_string()),
        _ => {}
    }
    match (&a.agent_error, &b.agent_error) {
        (None, Some(_)) => parts.push("B failed".to_string()),
        (Some(_), None) => parts.push("A failed".to_string()),
        _ => {}
    }
    if same_text(a.reply.as_deref(), b.reply.as_deref()) {
        parts.push("the same reply".to_string());
    } else {
        parts.push("the reply differs".to_string());
    }
    if let Some(time) = time_part(a.total_ns, b.total_ns) {
        parts.push(time);
    }
    parts.join("; ")
}

fn results(run: &RunView) -> Vec<Option<(String, Option<String>)>> {
    run.steps
        .iter()
        .flat_map(|s| s.calls.iter())
        .map(|c| {
            c.outcome
                .as_ref()
                .map(|o| (o.text.trim().to_string(), o.error.clone()))
        })
        .collect()
}

/// `B took 2.1× as long`, `A took 1.4× as long`, or `about as long` within 10 %.
fn time_part(a: Option<i64>, b: Option<i64>) -> Option<String> {
    let (a, b) = (a? as f64, b? as f64);
    if a <= 0.0 || b <= 0.0 {
        return None;
    }
    Some(if b > a * 1.1 {
        format!("B took {:.1}× as long", b / a)
    } else if a > b * 1.1 {
        format!("A took {:.1}× as long", a / b)
    } else {
        "about as long".to_string()
    })
}
