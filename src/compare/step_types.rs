//! What a step and a run are, for comparing: tool calls, their outcomes, a step's model call
//! with its tokens and cost, a whole run's steps and sums.

use serde::Serialize;
use serde_json::Value;

use tracer_trace::TokenCounts;
use tracer_trace::account::cost::{CostSum, HopCost};

/// One tool call as the wire carried it: `{"name", "arguments"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    pub name: String,
    pub arguments: Value,
}

impl Call {
    /// `append {"content":"buy milk"}`.
    pub fn display(&self) -> String {
        match &self.arguments {
            Value::Null => self.name.clone(),
            Value::Object(map) if map.is_empty() => self.name.clone(),
            other => format!("{} {other}", self.name),
        }
    }
}

/// What the MCP server answered to a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutcome {
    pub text: String,
    /// `tool error` (`isError: true`), `protocol error` (JSON-RPC error), or `failed` (no answer).
    pub error: Option<String>,
    pub duration_ns: Option<i64>,
}

/// A tool call with its outcome when the MCP hop that ran it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCall {
    #[serde(flatten)]
    pub call: Call,
    pub outcome: Option<ToolOutcome>,
}

/// One step: a model call and the tool calls it asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The model hop of this step.
    #[serde(skip)]
    pub hop_id: String,
    pub model: Option<String>,
    /// Messages sent to the model in this call.
    pub messages: usize,
    pub tools_offered: usize,
    pub calls: Vec<StepCall>,
    /// The model's text (the final answer on the last step).
    pub content: String,
    pub model_ns: Option<i64>,
    pub tool_ns: i64,
    /// The tokens the model reported for this call (the whole prompt, its cached parts, the
    /// output).
    pub tokens: TokenCounts,
    /// What the call cost at list prices, or why that is unknown (absent for a step without a
    /// model call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<HopCost>,
    /// The model call failed (no answer, an HTTP error, an error in the body).
    pub error: Option<String>,
}

/// A whole trace, read for comparing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunView {
    pub trace: String,
    pub title: Option<String>,
    pub steps: Vec<Step>,
    /// The agent's answer to you, else the last model answer.
    pub reply: Option<String>,
    /// The agent hop failed or answered an error.
    pub agent_error: Option<String>,
    pub step_limit_reached: bool,
    pub total_ns: Option<i64>,
}

impl RunView {
    /// Every tool call, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.steps
            .iter()
            .flat_map(|s| s.calls.iter().map(|c| c.call.clone()))
            .collect()
    }

    /// Calls whose MCP answer was an error.
    pub fn tool_errors(&self) -> Vec<(&StepCall, &str)> {
        self.steps
            .iter()
            .flat_map(|s| s.calls.iter())
            .filter_map(|c| Some((c, c.outcome.as_ref()?.error.as_deref()?)))
            .collect()
    }

    pub fn model_ns(&self) -> i64 {
        self.steps.iter().filter_map(|s| s.model_ns).sum()
    }

    pub fn tool_ns(&self) -> i64 {
        self.steps.iter().map(|s| s.tool_ns).sum()
    }

    /// The tokens of every step, summed bucket by bucket.
    pub fn tokens(&self) -> TokenCounts {
        TokenCounts::sum(self.steps.iter().map(|s| &s.tokens))
    }

    /// The cost of every step's model call, summed ("at least" when one is unpriced).
    pub fn cost(&self) -> CostSum {
        let mut sum = CostSum::default();
        for cost in self.steps.iter().filter_map(|s| s.cost.as_ref()) {
            sum.add(cost);
        }
        sum
    }
}
