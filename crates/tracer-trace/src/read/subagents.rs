//! Subagents: a model's call of a tool that starts another agent (Claude Code's `Task` or
//! `Agent`, Codex's `spawn_agent`), and the model requests that agent made, a fresh
//! conversation whose first user message is the call's `prompt` (or `message`). Each is a thread
//! of its own inside the trace, linked to the answer that asked for it. Pure.

use serde_json::Value;

use crate::{Direction, RecordedHop};
use tracer_wire::dialect::{HopReading, Reading, ToolCall};

/// Tools whose call starts a subagent.
pub(crate) const SPAWNING_TOOLS: [&str; 3] = ["Task", "Agent", "spawn_agent"];

/// What a call that spawned a subagent asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spawn {
    /// The hop whose answer asked for it.
    pub asked_in: usize,
    /// The call's `description` (else its `subagent_type`), for the thread's name.
    pub description: String,
    /// The prompt the subagent's first user message carries.
    pub prompt: String,
}

/// The subagent thread one hop belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Thread {
    /// 1 for the trace's first subagent, 2 for the next, ...
    pub number: usize,
    pub spawn: Spawn,
}

/// The prompt of a spawning call, if `call` is one.
pub(crate) fn spawn_prompt(call: &ToolCall) -> Option<&str> {
    prompt_of(&call.name, &call.arguments)
}

/// The prompt of a call of tool `name` with `arguments`, if it spawns a subagent.
pub(crate) fn prompt_of<'a>(name: &str, arguments: &'a Value) -> Option<&'a str> {
    if !SPAWNING_TOOLS.contains(&name) {
        return None;
    }
    ["prompt", "message"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(Value::as_str))
        .map(str::trim)
        .filter(|prompt| !prompt.is_empty())
}

/// Whether a model request whose user messages are `user_texts` is a subagent started by one
/// of the `asked` calls (its first user message carries the call's prompt).
pub(crate) fn started_by<'a>(
    user_texts: &[String],
    mut asked: impl Iterator<Item = (&'a str, &'a Value)>,
) -> bool {
    let Some(first) = user_texts.first() else {
        return false;
    };
    asked.any(|(name, arguments)| prompt_of(name, arguments).is_some_and(|p| first.contains(p)))
}

/// Each hop's subagent thread (None for hops of the trace's own conversation).
pub(crate) fn threads_of(hops: &[RecordedHop], readings: &[HopReading]) -> Vec<Option<Thread>> {
    let mut spawns: Vec<Spawn> = Vec::new();
    for (index, reading) in readings.iter().enumerate() {
        let Some(Reading::ModelResponse(reply)) = reading.response.as_ref().map(|r| &r.reading)
        else {
            continue;
        };
        for call in &reply.message.tool_calls {
            if let Some(prompt) = spawn_prompt(call) {
                let description = ["description", "subagent_type"]
                    .iter()
                    .find_map(|key| call.arguments.get(key).and_then(Value::as_str))
                    .unwrap_or(&call.name)
                    .to_string();
                spawns.push(Spawn {
                    asked_in: index,
                    description,
                    prompt: prompt.to_string(),
                });
            }
        }
    }
    readings
        .iter()
        .enumerate()
        .map(|(index, reading)| {
            let Reading::ModelRequest(request) = &reading.request.reading else {
                return None;
            };
            let first = request.messages.iter().find(|m| m.role == "user")?;
            let started = hops[index].start.started_unix_ns;
            spawns
                .iter()
                .enumerate()
                .find(|(_, spawn)| {
                    spawn.asked_in != index
                        && hops[spawn.asked_in].start.started_unix_ns <= started
                        && first.content.contains(&spawn.prompt)
                })
                .map(|(n, spawn)| Thread {
                    number: n + 1,
                    spawn: spawn.clone(),
                })
        })
        .collect()
}

/// `summary` marked with its thread: a subagent's message says which and where it was asked
/// (`subagent 1 (Add the note, asked in message 4): …`); the answer that asked says what it
/// started (`… · starts subagent 1`). `answer_numbers` are the hops' answers' message numbers.
pub(crate) fn marked(
    summary: String,
    threads: &[Option<Thread>],
    index: usize,
    direction: Direction,
    answer_numbers: &[usize],
) -> String {
    if let Some(Some(thread)) = threads.get(index) {
        let asked = answer_numbers
            .get(thread.spawn.asked_in)
            .copied()
            .unwrap_or(0);
        return format!(
            "subagent {} ({}, asked in message {asked}): {summary}",
            thread.number, thread.spawn.description
        );
    }
    if direction != Direction::Response {
        return summary;
    }
    let mut started: Vec<usize> = threads
        .iter()
        .flatten()
        .filter(|t| t.spawn.asked_in == index)
        .map(|t| t.number)
        .collect();
    started.dedup();
    if started.is_empty() {
        return summary;
    }
    let list: Vec<String> = started.iter().map(usize::to_string).collect();
    format!("{summary} · starts subagent {}", list.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracer_wire::dialect::ToolCallForm;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: None,
            name: name.into(),
            arguments,
            arguments_invalid: false,
            form: ToolCallForm::Structured,
        }
    }

    #[test]
    fn task_agent_and_spawn_agent_calls_carry_their_prompt() {
        let prompt = serde_json::json!({"description": "d", "prompt": " Add it "});
        assert_eq!(spawn_prompt(&call("Task", prompt.clone())), Some("Add it"));
        assert_eq!(spawn_prompt(&call("Agent", prompt.clone())), Some("Add it"));
        let codex = serde_json::json!({"message": "look"});
        assert_eq!(spawn_prompt(&call("spawn_agent", codex)), Some("look"));
        assert_eq!(spawn_prompt(&call("Read", prompt)), None);
        assert_eq!(spawn_prompt(&call("Task", serde_json::json!({}))), None);
    }
}
