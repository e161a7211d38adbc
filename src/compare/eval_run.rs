//! Running a question set against an agent: each question sent (through a tracer proxy's agent
//! route), its trace awaited and judged, every verdict stored as it is made.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use super::judge::{Reason, judge};
use super::load::view_of;
use super::progress::{Progress, StopFlag};
use super::question_set::Question;
use super::send::{RECORD_WAIT, join_url, post_json, wait_for_trace};
use super::steps::Call;
use tracer_store::Store;
use tracer_store::eval_rows::{EvalResultRow, NewEvalRun};
use tracer_trace::account::cost::CostSum;
use tracer_trace::summarize;
use tracer_wire::hop::now_unix_ns;
use tracer_wire::trace_context::TraceParent;

/// How a question is put to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentApi {
    /// `POST /agent {"message"}` (notes-agent's own API).
    Agent,
    /// `POST /v1/chat/completions` with one user message.
    OpenAi,
}

impl AgentApi {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentApi::Agent => "agent",
            AgentApi::OpenAi => "openai",
        }
    }

    fn path(self) -> &'static str {
        match self {
            AgentApi::Agent => "/agent",
            AgentApi::OpenAi => "/v1/chat/completions",
        }
    }

    fn body(self, ask: &str) -> Value {
        match self {
            AgentApi::Agent => json!({ "message": ask }),
            AgentApi::OpenAi => json!({
                "model": "agent",
                "messages": [{ "role": "user", "content": ask }],
            }),
        }
    }
}

/// What a run is asked to do.
#[derive(Debug, Clone)]
pub struct EvalSettings {
    pub file: String,
    pub agent: String,
    pub api: AgentApi,
    pub runs: u32,
    pub label: Option<String>,
    /// How long one question may take to be answered.
    pub timeout: Duration,
}

/// One question asked once, judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attempt {
    pub pass: bool,
    pub reasons: Vec<Reason>,
    pub trace: Option<String>,
    #[serde(skip)]
    pub calls: Vec<Call>,
    #[serde(skip)]
    pub reply: Option<String>,
    /// What the model calls of its trace cost at list prices (None without a trace).
    #[serde(skip)]
    pub cost: Option<CostSum>,
}

/// A question and its runs; it passes when every run passes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionResult {
    pub id: String,
    pub passed: bool,
    pub runs: Vec<Attempt>,
}

impl QuestionResult {
    pub fn new(id: String, runs: Vec<Attempt>) -> Self {
        let passed = !runs.is_empty() && runs.iter().all(|a| a.pass);
        Self { id, passed, runs }
    }

    /// What its runs' model calls cost, summed (an attempt without a trace adds nothing).
    pub fn cost(&self) -> CostSum {
        let mut sum = CostSum::default();
        for cost in self.runs.iter().filter_map(|a| a.cost.as_ref()) {
            sum.add_sum(cost);
        }
        sum
    }

    fn to_json(&self) -> Value {
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|attempt| {
                let mut value = serde_json::to_value(attempt).unwrap_or(Value::Null);
                if let (Some(object), Some(cost)) = (value.as_object_mut(), &attempt.cost) {
                    object.insert("cost".into(), cost_json(cost));
                }
                value
            })
            .collect();
        json!({"id": self.id, "passed": self.passed, "cost": cost_json(&self.cost()), "runs": runs})
    }
}

/// A cost sum as the eval's JSON carries it: `{"usd", "calls", "unpriced_calls", "text"}`;
/// `usd` is what the priced calls cost ("at least" when `unpriced_calls` > 0), null when none is.
pub fn cost_json(cost: &CostSum) -> Value {
    let priced = cost.calls - cost.unpriced_calls;
    json!({
        "usd": (priced > 0).then_some(cost.usd),
        "calls": cost.calls,
        "unpriced_calls": cost.unpriced_calls,
        "text": cost.text(),
    })
}

/// A stored run with its verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOutcome {
    pub run: i64,
    pub label: Option<String>,
    /// `complete`, `partial` or `running`.
    pub state: String,
    pub total: usize,
    pub questions: Vec<QuestionResult>,
}

impl EvalOutcome {
    pub fn passed(&self) -> usize {
        self.questions.iter().filter(|q| q.passed).count()
    }

    /// What every question's runs cost, summed.
    pub fn cost(&self) -> CostSum {
        let mut sum = CostSum::default();
        for question in &self.questions {
            sum.add_sum(&question.cost());
        }
        sum
    }

    /// `{"run", "label", "passed", "total", "questions": [{"id", "passed", "runs": [...]}]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "run": self.run,
            "label": self.label,
            "state": self.state,
            "passed": self.passed(),
            "total": self.total,
            "cost": cost_json(&self.cost()),
            "prices": tracer_trace::account::cost::estimate_label(),
            "questions": self.questions.iter().map(QuestionResult::to_json).collect::<Vec<_>>(),
        })
    }
}

/// Asks the whole set `settings.runs` times, in order each time, storing each verdict; stops early
/// on `stop`.
pub async fn run_eval(
    store: &Store,
    questions: &[Question],
    settings: &EvalSettings,
    stop: &StopFlag,
) -> anyhow::Result<EvalOutcome> {
    let run = store
        .create_eval_run(&NewEvalRun {
            label: settings.label.clone(),
            file: settings.file.clone(),
            agent: settings.agent.clone(),
            agent_api: settings.api.as_str().to_string(),
            runs_per_question: i64::from(settings.runs),
            total: questions.len() as i64,
        })
        .await?;
    let mut progress = Progress::new(questions.len() * settings.runs as usize, "passed");
    // A run is one pass over the whole set in order: a set whose questions build on each other
    // (one notes file) is asked as written each time, not one question N times in a row.
    let mut attempts: Vec<Vec<Attempt>> = questions.iter().map(|_| Vec::new()).collect();
    let mut nothing_recorded = false;
    let mut any_trace = false;
    'runs: for attempt in 1..=settings.runs {
        for (question, asked) in questions.iter().zip(attempts.iter_mut()) {
            if stop.raised() {
                break 'runs;
            }
            let label = if settings.runs > 1 {
                format!("{} (run {attempt})", question.id)
            } else {
                question.id.clone()
            };
            progress.start(&label);
            let judged = tokio::select! {
                judged = ask_and_judge(store, question, settings) => judged?,
                () = stop.abandoned() => break 'runs,
            };
            let verdict = match judged.reasons.first() {
                None => "pass".to_string(),
                Some(first) => format!("FAIL {}", first.reason),
            };
            progress.finish(&label, &verdict, judged.pass);
            store
                .add_eval_result(&EvalResultRow {
                    run_id: run,
                    question_id: question.id.clone(),
                    attempt: i64::from(attempt),
                    ask: question.ask.clone(),
                    pass: judged.pass,
                    reasons: serde_json::to_string(&judged.reasons)?,
                    trace_id: judged.trace.clone(),
                    tool_calls: serde_json::to_string(&judged.calls)?,
                    reply: judged.reply.clone(),
                    judged_unix_ns: now_unix_ns(),
                })
                .await?;
            let unrecorded =
                judged.trace.is_none() && judged.reasons.iter().any(|r| r.reason == "no_trace");
            any_trace |= judged.trace.is_some();
            asked.push(judged);
            if unrecorded && !any_trace {
                // Every other question would wait for a trace that is not coming either.
                nothing_recorded = true;
                break 'runs;
            }
        }
    }
    let results: Vec<QuestionResult> = questions
        .iter()
        .zip(attempts)
        .map(|(question, runs)| QuestionResult::new(question.id.clone(), runs))
        .collect();
    progress.end();
    if nothing_recorded {
        tracer_serve::say!(
            "tracer: stopping: nothing was recorded for the first question; --agent must be a \
             tracer proxy's agent route that records to {}",
            store.path().display()
        );
    }
    let complete = results.len() == questions.len()
        && results
            .iter()
            .all(|q| q.runs.len() == settings.runs as usize);
    let state = if complete { "complete" } else { "partial" };
    let outcome = EvalOutcome {
        run,
        label: settings.label.clone(),
        state: state.to_string(),
        total: questions.len(),
        questions: results.into_iter().filter(|q| !q.runs.is_empty()).collect(),
    };
    store
        .finish_eval_run(run, state, outcome.passed() as i64)
        .await?;
    Ok(outcome)
}

/// Sends one question with a fresh trace id, waits for its trace, judges it.
async fn ask_and_judge(
    store: &Store,
    question: &Question,
    settings: &EvalSettings,
) -> anyhow::Result<Attempt> {
    let parent = TraceParent::new_root();
    let trace_id = parent.trace_id_hex();
    let url = join_url(&settings.agent, settings.api.path());
    let body = serde_json::to_vec(&settings.api.body(&question.ask))?;
    let answer = post_json(&url, body, Some(&parent), settings.timeout).await;
    let failed = |reason: Reason| Attempt {
        pass: false,
        reasons: vec![reason],
        trace: None,
        calls: Vec::new(),
        reply: None,
        cost: None,
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(error) => {
            return Ok(failed(Reason::new("agent_error", error.to_string())));
        }
    };
    let Some(trace) = wait_for_trace(store, &trace_id, RECORD_WAIT).await? else {
        return Ok(failed(Reason::new(
            "no_trace",
            format!(
                "the agent answered HTTP {} but no trace {trace_id} was recorded in {}: send \
                 through a tracer proxy's agent route (--agent) that records to this database",
                answer.status,
                store.path().display()
            ),
        )));
    };
    let view = view_of(&trace);
    let mut reasons = judge(question, &view);
    if answer.status >= 400 && view.agent_error.is_none() {
        reasons.insert(
            0,
            Reason::new(
                "agent_error",
                format!("the agent answered HTTP {}", answer.status),
            ),
        );
    }
    Ok(Attempt {
        pass: reasons.is_empty(),
        reasons,
        trace: Some(view.trace.clone()),
        calls: view.calls(),
        reply: view.reply.clone(),
        cost: Some(summarize(&trace.hops).cost),
    })
}
