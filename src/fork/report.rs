//! What `tracer fork` says: the refusal when the host would run its own tools again, and the
//! fork's outcome (its trace, what was replayed, where and why it went live).

use serde_json::{Value, json};

use super::plan::ForkPlan;
use super::steer::SteerOutcome;
use tracer_export::hop_log::ForkEntry;
use tracer_trace::words::{plural, shorten};
use tracer_wire::safe_text::one_line;

/// Why a fork does not start: the host-run tool calls its replay would run again.
pub fn local_refusal(plan: &ForkPlan) -> String {
    let mut text = format!(
        "tracer fork: not started. Before message {} these would run again, for real: the host \
         runs these tools itself (the answers replayed ask for them), or they are not behind the \
         proxy:\n",
        plan.at
    );
    for call in &plan.local_calls {
        let arguments = match &call.arguments {
            Value::Null => String::new(),
            other => format!(" {}", shorten(&one_line(&other.to_string()), 100)),
        };
        text.push_str(&format!(
            "  message {}: {}{arguments}\n",
            call.message,
            one_line(&call.name)
        ));
    }
    text.push_str("Add --allow-local-tools to run them anyway.");
    text
}

/// The line `show` and `ls` give a fork: what it was forked from, where, with which edits.
pub fn fork_line(fork: &ForkEntry) -> String {
    let mut line = format!(
        "fork of trace {} at message {}: {}",
        fork.of,
        fork.at,
        one_line(&super::edits::words_of(&fork.edits))
    );
    match (fork.live_at, &fork.live_reason) {
        (Some(at), Some(reason)) => line.push_str(&format!(
            " · {} from the recording, live from message {at} ({})",
            fork.replayed,
            one_line(reason)
        )),
        _ => line.push_str(&format!(" · {} from the recording", fork.replayed)),
    }
    line
}

fn host_words(host: &str) -> &'static str {
    match host {
        "reference" => {
            "the host: notes-agent and notes-server started by tracer fork on free ports"
        }
        "routes" => {
            "the host: the running agent, through the recorded routes' addresses (taken by the fork)"
        }
        _ => "the host: the command run again under tracer run",
    }
}

/// A fork as it ended.
pub struct ForkReport<'a> {
    pub plan: &'a ForkPlan,
    pub trace: Option<&'a str>,
    pub outcome: &'a SteerOutcome,
    /// Why the re-driven request got no answer (or the command failed), if it did.
    pub answer_error: Option<&'a str>,
    /// The sandbox the command ran in, in words.
    pub sandbox: Option<&'a str>,
    /// Where the fork and the original part: the step, and what differs there.
    pub parts_at: Option<(usize, &'static str)>,
    /// How the host was driven: `reference`, `routes` or `command`.
    pub host: &'static str,
}

impl ForkReport<'_> {
    pub fn text(&self) -> String {
        let plan = self.plan;
        let mut text = match self.trace {
            Some(trace) => format!(
                "forked trace {} at message {} ({}) as trace {trace}\n",
                plan.original,
                plan.at,
                one_line(&plan.edits.words())
            ),
            None => format!(
                "fork of trace {} at message {}: no trace was recorded\n",
                plan.original, plan.at
            ),
        };
        text.push_str(&format!("  {}\n", host_words(self.host)));
        text.push_str(&format!(
            "  {} answered from the recording (nothing before message {} reached a model or a tool server)\n",
            plural(self.outcome.replayed, "request"),
            plan.at
        ));
        match &self.outcome.live {
            Some(live) if live.at_n => text.push_str(&format!(
                "  live from message {}: {}\n",
                live.message,
                one_line(&live.reason)
            )),
            Some(live) => text.push_str(&format!(
                "  the replay ended early, live from message {}: {}; the edit at message {} was not made\n",
                live.message,
                one_line(&live.reason),
                plan.at
            )),
            None => text.push_str(&format!(
                "  message {} was never reached: the host stopped before it\n",
                plan.at
            )),
        }
        if !self.outcome.not_asked.is_empty() {
            let numbers: Vec<String> = self
                .outcome
                .not_asked
                .iter()
                .map(|n| n.to_string())
                .collect();
            text.push_str(&format!(
                "  recorded requests not sent again: messages {}\n",
                numbers.join(", ")
            ));
        }
        for note in &self.outcome.notes {
            text.push_str(&format!("  note: {}\n", one_line(note)));
        }
        if let Some(error) = self.answer_error {
            text.push_str(&format!("  the agent's answer: {}\n", one_line(error)));
        }
        if let Some(sandbox) = self.sandbox {
            text.push_str(&format!("  ran in {}\n", one_line(sandbox)));
        }
        if self.trace.is_some() {
            text.push_str(&match self.parts_at {
                Some((step, what)) => format!("  the runs part at step {step}: {what}\n"),
                None => "  the runs do not part: every step is the same\n".to_string(),
            });
        }
        if let Some(trace) = self.trace {
            text.push_str(&format!("  tracer diff {} {trace}\n", plan.original));
        }
        text
    }

    pub fn to_json(&self) -> Value {
        let live = self.outcome.live.as_ref();
        json!({
            "original": self.plan.original,
            "at": self.plan.at,
            "edits": self.plan.edits.to_json(),
            "trace": self.trace,
            "replayed": self.outcome.replayed,
            "live_at": live.map(|l| l.message),
            "live_reason": live.map(|l| l.reason.clone()),
            "went_live_early": live.is_some_and(|l| !l.at_n),
            "not_asked": self.outcome.not_asked,
            "notes": self.outcome.notes,
            "answer_error": self.answer_error,
            "sandbox": self.sandbox,
            "host": self.host,
            "parts_at": self.parts_at.map(|(step, what)| json!({"step": step, "what": what})),
        })
    }
}
