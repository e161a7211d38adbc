//! Judging one answer to a question from its recorded trace: pass, or the reasons it failed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::question_set::{ExpectedCall, Question};
use super::steps::{Call, RunView};
use crate::trace::explain::shorten;

/// Why an answer failed. `reason` is one of the names in [`REASONS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    pub reason: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub got: Option<String>,
}

/// Every reason, in the order they are reported.
pub const REASONS: [&str; 10] = [
    "agent_error",
    "step_limit",
    "no_tool_call",
    "wrong_tool",
    "wrong_args",
    "extra_call",
    "forbidden_tool",
    "tool_error",
    "reply_mismatch",
    "no_trace",
];

impl Reason {
    pub fn new(reason: &str, message: impl Into<String>) -> Self {
        Self {
            reason: reason.to_string(),
            message: message.into(),
            tool: None,
            argument: None,
            expected: None,
            got: None,
        }
    }

    fn tool(mut self, tool: &str) -> Self {
        self.tool = Some(tool.to_string());
        self
    }
}

/// Judges a run of `question`; an empty list is a pass.
pub fn judge(question: &Question, run: &RunView) -> Vec<Reason> {
    let mut reasons = Vec::new();
    if let Some(error) = &run.agent_error {
        reasons.push(Reason::new(
            "agent_error",
            format!("the agent failed: {error}"),
        ));
    }
    if run.step_limit_reached {
        reasons.push(Reason::new(
            "step_limit",
            "the agent stopped at its step limit",
        ));
    }
    let calls = run.calls();
    let mut used = vec![false; calls.len()];
    if run.agent_error.is_none()
        && let Some(expected) = &question.calls
    {
        if !expected.is_empty() && calls.is_empty() {
            let names: Vec<&str> = expected.iter().map(|e| e.tool.as_str()).collect();
            reasons.push(
                Reason::new(
                    "no_tool_call",
                    format!("expected {}, but no tool was called", names.join(", ")),
                )
                .tool(names[0]),
            );
        } else {
            match_calls(question, expected, &calls, &mut used, &mut reasons);
        }
    }
    for (index, call) in calls.iter().enumerate() {
        if question.forbid.contains(&call.name) {
            used[index] = true;
            let mut reason = Reason::new(
                "forbidden_tool",
                format!(
                    "{} must not be called: {}",
                    call.name,
                    shorten(&call.display(), 80)
                ),
            )
            .tool(&call.name);
            reason.got = Some(call.arguments.to_string());
            reasons.push(reason);
        }
    }
    if question.calls.is_some() && run.agent_error.is_none() {
        for (index, call) in calls.iter().enumerate() {
            if !used[index] && !question.allow.contains(&call.name) {
                reasons.push(
                    Reason::new(
                        "extra_call",
                        format!("an extra call: {}", shorten(&call.display(), 80)),
                    )
                    .tool(&call.name),
                );
            }
        }
    }
    if !question.allow_tool_errors {
        for (call, kind) in run.tool_errors() {
            let text = call.outcome.as_ref().map_or("", |o| o.text.as_str());
            reasons.push(
                Reason::new(
                    "tool_error",
                    format!(
                        "{} answered a {kind}: {}",
                        call.call.name,
                        shorten(text, 80)
                    ),
                )
                .tool(&call.call.name),
            );
        }
    }
    if let Some(part) = &question.reply_contains
        && run.agent_error.is_none()
    {
        let reply = run.reply.as_deref().unwrap_or("");
        if !reply.to_lowercase().contains(&part.to_lowercase()) {
            let mut reason = Reason::new(
                "reply_mismatch",
                format!(
                    "the reply does not contain {part:?}: \"{}\"",
                    shorten(reply, 80)
                ),
            );
            reason.expected = Some(part.clone());
            reason.got = Some(reply.to_string());
            reasons.push(reason);
        }
    }
    reasons
}

/// Matches each expected call to a call on the wire, reporting wrong tools and arguments.
fn match_calls(
    question: &Question,
    expected: &[ExpectedCall],
    calls: &[Call],
    used: &mut [bool],
    reasons: &mut Vec<Reason>,
) {
    let mut from = 0;
    for (position, want) in expected.iter().enumerate() {
        let window = if question.order_exact { from } else { 0 };
        let candidates: Vec<usize> = (window..calls.len())
            .filter(|&i| !used[i] && calls[i].name == want.tool)
            .collect();
        if let Some(&hit) = candidates
            .iter()
            .find(|&&i| args_mismatch(want, &calls[i]).is_none())
        {
            used[hit] = true;
            from = hit + 1;
            continue;
        }
        if let Some(&first) = candidates.first() {
            used[first] = true;
            from = first + 1;
            if let Some(reason) = args_mismatch(want, &calls[first]) {
                reasons.push(reason);
            }
            continue;
        }
        // No call of this tool (in order): the first unexpected call stands for the wrong tool.
        let stand_in = (window..calls.len()).find(|&i| {
            !used[i]
                && !question.allow.contains(&calls[i].name)
                && !question.forbid.contains(&calls[i].name)
        });
        let got = stand_in.map_or_else(
            || {
                let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                names.join(", ")
            },
            |i| calls[i].name.clone(),
        );
        if let Some(i) = stand_in {
            used[i] = true;
            from = i + 1;
        }
        let order = if question.order_exact {
            format!(" as call {}", position + 1)
        } else {
            String::new()
        };
        let mut reason = Reason::new(
            "wrong_tool",
            format!("expected {}{order}, got {got}", want.tool),
        )
        .tool(&want.tool);
        reason.expected = Some(want.tool.clone());
        reason.got = Some(got);
        reasons.push(reason);
    }
}

/// The first named argument of `want` that `call` does not satisfy, as a `wrong_args` reason.
fn args_mismatch(want: &ExpectedCall, call: &Call) -> Option<Reason> {
    for (name, matcher) in &want.args {
        let got = call.arguments.get(name);
        if matcher.matches(got) {
            continue;
        }
        let got_text = got.map_or_else(|| "nothing".to_string(), Value::to_string);
        let mut reason = Reason::new(
            "wrong_args",
            format!(
                "{}: {name} expected {}, got {}",
                want.tool,
                matcher.describe(),
                shorten(&got_text, 60)
            ),
        )
        .tool(&want.tool);
        reason.argument = Some(name.clone());
        reason.expected = Some(matcher.describe());
        reason.got = Some(got_text);
        return Some(reason);
    }
    None
}
