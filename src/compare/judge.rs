//! Judging one answer to a question from its recorded trace: pass, or the reasons it failed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::question_set::{ExpectedCall, Question};
use super::steps::{Call, RunView};
use tracer_trace::words::shorten;

/// Why an answer failed: `reason` is `agent_error`, `no_trace`, `step_limit`, `no_tool_call`,
/// `wrong_tool`, `wrong_args`, `extra_call`, `forbidden_tool`, `tool_error` or `reply_mismatch`.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::question_set::parse;
    use crate::compare::steps::{Step, StepCall};
    use serde_json::json;

    fn run(calls: &[(&str, Value)]) -> RunView {
        let step = Step {
            hop_id: "h".into(),
            model: None,
            messages: 2,
            tools_offered: 5,
            calls: calls
                .iter()
                .map(|(name, arguments)| StepCall {
                    call: Call {
                        name: name.to_string(),
                        arguments: arguments.clone(),
                    },
                    outcome: None,
                })
                .collect(),
            content: String::new(),
            model_ns: None,
            tool_ns: 0,
            tokens: Default::default(),
            cost: None,
            error: None,
        };
        RunView {
            trace: "t".into(),
            title: None,
            steps: vec![step],
            reply: Some("Done: buy milk".into()),
            agent_error: None,
            step_limit_reached: false,
            total_ns: None,
        }
    }

    fn question(toml: &str) -> Question {
        let text = format!("[[question]]\nid = \"q\"\nask = \"x\"\n{toml}");
        parse("t", &text).unwrap().remove(0)
    }

    fn reasons(q: &Question, r: &RunView) -> Vec<String> {
        judge(q, r).into_iter().map(|r| r.reason).collect()
    }

    #[test]
    fn exact_order_wants_the_calls_in_that_order() {
        let q = question("order = \"exact\"\ncalls = [{ tool = \"read\" }, { tool = \"append\" }]");
        let in_order = run(&[("read", json!({})), ("append", json!({"content": "a"}))]);
        assert!(judge(&q, &in_order).is_empty());
        let reversed = run(&[("append", json!({"content": "a"})), ("read", json!({}))]);
        let found = judge(&q, &reversed);
        assert_eq!(found[0].reason, "wrong_tool", "{found:?}");
        assert!(found[0].message.contains("as call 2"), "{found:?}");
        let any = question("calls = [{ tool = \"read\" }, { tool = \"append\" }]");
        assert!(judge(&any, &reversed).is_empty());
    }

    #[test]
    fn allowed_forbidden_and_extra_calls() {
        let q =
            question("calls = [{ tool = \"update\" }]\nallow = [\"read\"]\nforbid = [\"write\"]");
        assert!(judge(&q, &run(&[("read", json!({})), ("update", json!({}))])).is_empty());
        let wrote = run(&[("update", json!({})), ("write", json!({"content": ""}))]);
        assert_eq!(
            reasons(&q, &wrote),
            ["forbidden_tool"],
            "a forbidden call is not also extra"
        );
        let cleared = run(&[("update", json!({})), ("clear", json!({}))]);
        assert_eq!(reasons(&q, &cleared), ["extra_call"]);
        let none = question("calls = []");
        assert_eq!(reasons(&none, &run(&[("read", json!({}))])), ["extra_call"]);
        let unjudged = question("reply_contains = \"milk\"");
        assert!(judge(&unjudged, &run(&[("read", json!({}))])).is_empty());
    }

    #[test]
    fn wrong_args_names_the_argument_and_absent_means_not_given() {
        let q = question(
            "calls = [{ tool = \"append\", args = { content = \"buy milk\", where = { absent = true } } }]",
        );
        assert!(judge(&q, &run(&[("append", json!({"content": " Buy Milk"}))])).is_empty());
        let found = judge(
            &q,
            &run(&[("append", json!({"content": "x", "where": "top"}))]),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].argument.as_deref(), Some("content"));
        assert_eq!(found[0].got.as_deref(), Some("\"x\""));
        let found = judge(
            &q,
            &run(&[("append", json!({"content": "buy milk", "where": "top"}))]),
        );
        assert_eq!(found[0].argument.as_deref(), Some("where"));
        assert_eq!(found[0].expected.as_deref(), Some("absent"));
    }

    #[test]
    fn an_agent_error_is_not_also_blamed_on_missing_calls() {
        let q = question("calls = [{ tool = \"append\" }]\nreply_contains = \"milk\"");
        let mut failed = run(&[]);
        failed.agent_error = Some("HTTP 502".into());
        assert_eq!(reasons(&q, &failed), ["agent_error"]);
        assert_eq!(reasons(&q, &run(&[])), ["no_tool_call"]);
    }
}
