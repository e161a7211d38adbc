//! `tracer eval FILE`: ask an agent a question set, judge each answer from its recorded trace,
//! store the run; `--list` the stored runs; `--show RUN` one again; `--compare RUN_A RUN_B`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::stdout_text::{emit, emit_json};
use crate::compare::eval_compare::{compare_json, render_compare};
use crate::compare::eval_report::{list_json, load_outcome, render_list, render_run};
use crate::compare::eval_run::{AgentApi, EvalSettings, run_eval};
use crate::compare::progress::StopFlag;
use crate::compare::question_set;
use tracer_store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentApiArg {
    /// POST /agent {"message"} (notes-agent's API)
    Agent,
    /// POST /v1/chat/completions with one user message
    Openai,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The question set (TOML, [[question]] tables; see examples/evals/notes.toml)
    #[arg(value_name = "FILE", required_unless_present_any = ["list", "compare", "show"])]
    pub file: Option<String>,
    /// The agent's base URL: a tracer proxy's agent route recording to --db
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8081")]
    pub agent: String,
    /// How questions are sent: `agent` (POST /agent) or `openai` (POST /v1/chat/completions)
    #[arg(long, value_enum, default_value = "agent")]
    pub agent_api: AgentApiArg,
    /// Ask each question this many times (it passes when every run passes)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// A label stored with the run (e.g. "new descriptions")
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Exit with status 1 when fewer than N questions pass
    #[arg(long, value_name = "N")]
    pub min_pass: Option<usize>,
    /// Seconds to wait for each answer
    #[arg(long, value_name = "SECONDS", default_value = "600", value_parser = parse_seconds)]
    pub timeout: Duration,
    /// List the stored runs
    #[arg(long, conflicts_with_all = ["file", "compare"])]
    pub list: bool,
    /// Print a stored run again: its table, total and cost (priced with today's table)
    #[arg(long, value_name = "RUN", conflicts_with_all = ["file", "compare", "list"])]
    pub show: Option<i64>,
    /// Compare two stored runs question by question
    #[arg(long, num_args = 2, value_names = ["RUN_A", "RUN_B"], conflicts_with = "file")]
    pub compare: Option<Vec<i64>>,
    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
}

/// A positive number of seconds.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero() && d.as_secs() < 365 * 24 * 3600)
        .ok_or_else(|| format!("`{text}` is not a number of seconds above 0"))
}

pub async fn run(db: &Path, args: EvalArgs) -> anyhow::Result<ExitCode> {
    // A bad question set is reported before the database is touched.
    let questions = match &args.file {
        Some(file) => Some(question_set::load(file)?),
        None => None,
    };
    let store = Store::open(db).await?;
    let result = run_with(&store, &args, questions).await;
    store.close().await;
    result
}

async fn run_with(
    store: &Store,
    args: &EvalArgs,
    questions: Option<Vec<question_set::Question>>,
) -> anyhow::Result<ExitCode> {
    if args.list {
        let runs = store.eval_runs().await?;
        if args.json {
            emit_json(&list_json(&runs))?;
        } else {
            emit(&render_list(&runs))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(run) = args.show {
        let outcome = load_outcome(store, &store.eval_run(run).await?).await?;
        if args.json {
            emit_json(&outcome.to_json())?;
        } else {
            emit(&render_run(&outcome))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(pair) = &args.compare {
        let a = load_outcome(store, &store.eval_run(pair[0]).await?).await?;
        let b = load_outcome(store, &store.eval_run(pair[1]).await?).await?;
        if args.json {
            emit_json(&compare_json(&a, &b))?;
        } else {
            emit(&render_compare(&a, &b))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (Some(file), Some(questions)) = (&args.file, questions) else {
        anyhow::bail!("give a question set FILE, --list, --show RUN or --compare RUN_A RUN_B");
    };
    let settings = EvalSettings {
        file: file.clone(),
        agent: args.agent.clone(),
        api: match args.agent_api {
            AgentApiArg::Agent => AgentApi::Agent,
            AgentApiArg::Openai => AgentApi::OpenAi,
        },
        runs: args.runs,
        label: args.label.clone(),
        timeout: args.timeout,
    };
    let stop = StopFlag::listen("the question in flight");
    let outcome = run_eval(store, &questions, &settings, &stop).await?;
    if args.json {
        emit_json(&outcome.to_json())?;
    } else {
        emit(&render_run(&outcome))?;
    }
    let passed = outcome.passed();
    if let Some(min) = args.min_pass
        && passed < min
    {
        tracer_serve::say!("tracer: {passed} passed, fewer than --min-pass {min}");
        return Ok(ExitCode::from(1));
    }
    match (outcome.state.as_str(), stop.raised()) {
        ("complete", _) => {}
        (_, true) => return Ok(ExitCode::from(130)),
        (_, false) => return Ok(ExitCode::FAILURE),
    }
    Ok(ExitCode::SUCCESS)
}
