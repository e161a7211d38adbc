//! `tracer rerun ID`: send a trace's first request to the agent again (recorded as a new trace)
//! and diff or tally; or (`--step K --model-url URL`) re-send one recorded model request.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use super::eval_cmd::parse_seconds;
use super::stdout_text::{emit, emit_json};
use crate::compare::diff::Diff;
use crate::compare::diff_text::render;
use crate::compare::load::{is_file, view_of};
use crate::compare::progress::StopFlag;
use crate::compare::rerun_agent::{
    RerunError, entry_request, live_route, render_runs, rerun_agent, runs_json,
};
use crate::compare::rerun_step::{
    answer_tally, fetch_tools, resend, step_request, target_url, tools_for,
};
use crate::compare::{step_edits, tally};
use crate::replay::source;
use tracer_live::correlate::group_new_hops;
use tracer_live::load::LoadedTrace;
use tracer_store::Store;

#[derive(Debug, Args)]
pub struct RerunArgs {
    /// The trace: its id, an unambiguous prefix, or a hop-log file
    #[arg(value_name = "ID")]
    pub id: String,
    /// The agent's base URL (default: the proxy route that recorded the trace, if one serves it)
    #[arg(long, value_name = "URL", conflicts_with = "step")]
    pub to: Option<String>,
    /// Run this many times and tally the tool calls
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub times: u32,
    /// Re-send the model request of step K (1 = the first model call) instead of the agent request
    #[arg(long, value_name = "K", requires = "model_url", value_parser = clap::value_parser!(u64).range(1..))]
    pub step: Option<u64>,
    /// With --step: the model server (a base URL gets the recorded path; a URL with a path is used as is)
    #[arg(long, value_name = "URL", requires = "step")]
    pub model_url: Option<String>,
    /// With --step: ask this model instead of the recorded one
    #[arg(long, value_name = "NAME", requires = "step")]
    pub model: Option<String>,
    /// With --step: replace the recorded tool list with the one this MCP server gives now
    #[arg(long, value_name = "MCP_URL", requires = "step")]
    pub tools_from: Option<String>,
    /// With --step: set what a JSON Pointer names in the request before it is sent
    /// (`/messages/0/content="Add eggs to my notes"`; repeatable, applied in order)
    #[arg(long = "set", value_name = "POINTER=JSON", requires = "step")]
    pub set: Vec<crate::compare::step_edits::SetEdit>,
    /// With --step: send this JSON body instead of the recorded one
    #[arg(long, value_name = "FILE", requires = "step")]
    pub body: Option<std::path::PathBuf>,
    /// With --step: open the request in $VISUAL or $EDITOR before it is sent
    #[arg(long, requires = "step")]
    pub edit: bool,
    /// Seconds to wait for each answer
    #[arg(long, value_name = "SECONDS", default_value = "600", value_parser = parse_seconds)]
    pub timeout: Duration,
    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
}

async fn load(store: &Store, id: &str) -> anyhow::Result<LoadedTrace> {
    if is_file(id) {
        Ok(source::from_file(id).await?)
    } else {
        group_new_hops(store).await?;
        Ok(source::from_store(store, id).await?)
    }
}

pub async fn run(db: &Path, args: RerunArgs) -> anyhow::Result<ExitCode> {
    if let (Some(step), Some(model_url)) = (args.step, &args.model_url)
        && is_file(&args.id)
    {
        // One model step re-sent from a hop-log file writes nothing: no database is needed.
        let original = source::from_file(&args.id).await?;
        let stop = StopFlag::listen("the run in flight");
        return rerun_one_step(&original, &args, step as usize, model_url, &stop).await;
    }
    let store = Store::open_existing(db).await?;
    let result = run_with(&store, &args).await;
    store.close().await;
    result
}

async fn run_with(store: &Store, args: &RerunArgs) -> anyhow::Result<ExitCode> {
    let original = load(store, &args.id).await?;
    let stop = StopFlag::listen("the run in flight");
    if let (Some(step), Some(model_url)) = (args.step, &args.model_url) {
        return rerun_one_step(&original, args, step as usize, model_url, &stop).await;
    }
    let entry = entry_request(&original)?;
    let to = match &args.to {
        Some(to) => to.clone(),
        None => live_route(store, &entry.route)
            .await?
            .ok_or_else(|| RerunError::NoLiveRoute(entry.route.clone()))?,
    };
    let view = view_of(&original);
    tracer_serve::say!("{}", tools_run_again(&view.calls()));
    let outcomes = rerun_agent(store, &entry, &to, args.times, args.timeout, &stop).await?;
    match (args.times, outcomes.first()) {
        (1, Some(outcome)) => {
            let new = outcome.view.clone().with_context(|| {
                outcome
                    .error
                    .clone()
                    .unwrap_or_else(|| "the re-run was not recorded".into())
            })?;
            let diff = Diff::new(view, new);
            if args.json {
                emit_json(&diff.to_json())?;
            } else {
                emit(&format!(
                    "re-ran trace {} as trace {} (via {to})\n\n{}",
                    original.row.id,
                    outcome.trace,
                    render(&diff)
                ))?;
            }
        }
        _ if args.json => {
            let mut doc = runs_json(&view, &to, &outcomes);
            doc["times"] = json!(args.times);
            doc["state"] = json!(run_state(outcomes.len(), args.times));
            emit_json(&doc)?;
        }
        _ => emit(&format!(
            "{}{}",
            render_runs(&view, &to, &outcomes),
            stopped_early(outcomes.len(), args.times)
        ))?,
    }
    Ok(finished(outcomes.len(), args.times))
}

/// The warning a re-run owes its user: the agent runs its tools again, for real.
fn tools_run_again(calls: &[crate::compare::steps::Call]) -> String {
    let mut names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    names.dedup();
    let original = if names.is_empty() {
        "the original called none".to_string()
    } else {
        format!("the original called {}", names.join(", "))
    };
    format!(
        "tracer rerun: the agent runs its tools again, for real ({original}): what they change \
         (a notes file, a ticket, a mail) changes again"
    )
}

/// `complete`, or `partial` when Ctrl-C stopped the runs before all were made.
fn run_state(made: usize, times: u32) -> &'static str {
    if made < times as usize {
        "partial"
    } else {
        "complete"
    }
}

/// The line that says the runs were cut short, if they were.
fn stopped_early(made: usize, times: u32) -> String {
    if made < times as usize {
        format!(
            "stopped by Ctrl-C: {made} of {} made\n",
            tracer_trace::words::plural(times as usize, "run")
        )
    } else {
        String::new()
    }
}

/// Exit 0, or 130 (as after Ctrl-C) when the runs were cut short.
fn finished(made: usize, times: u32) -> ExitCode {
    if made < times as usize {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    }
}

async fn rerun_one_step(
    original: &LoadedTrace,
    args: &RerunArgs,
    step: usize,
    model_url: &str,
    stop: &StopFlag,
) -> anyhow::Result<ExitCode> {
    let view = view_of(original);
    let mut request = step_request(original, &view, step)?;
    let mut edits: Vec<String> = Vec::new();
    if let Some(path) = &args.body {
        request.body = step_edits::body_from(path)?;
        edits.push(format!("body from {}", path.display()));
    }
    if let Some(model) = &args.model {
        request.set_model(model);
    }
    let mut tool_names = Vec::new();
    if let Some(mcp) = &args.tools_from {
        let tools = fetch_tools(mcp, args.timeout).await?;
        tool_names = tools.iter().map(|t| t.name.clone()).collect();
        request
            .body
            .insert("tools".into(), tools_for(request.dialect, &tools));
    }
    step_edits::apply(&mut request.body, &args.set)?;
    edits.extend(args.set.iter().map(|e| format!("{} set", e.pointer)));
    if args.edit {
        let scratch = tempfile_dir()?;
        request.body = step_edits::edit(&request.body, scratch.path())?;
        edits.push("edited in the editor".into());
    }
    let url = target_url(model_url, &request.path);
    let answers = resend(&request, &url, args.times, args.timeout, stop).await;
    let rows = answer_tally(&answers);
    let answered = answers.iter().filter(|a| a.error.is_none()).count();
    let model = request.model().unwrap_or("?");
    if args.json {
        let doc = json!({
            "trace": original.row.id,
            "step": step,
            "url": url,
            "model": model,
            "tools_from": args.tools_from,
            "edits": edits,
            "tools": tool_names,
            "tool_calls_recorded": request.recorded,
            "runs": answers.iter().map(|a| json!({
                "tool_calls": a.calls, "content": a.content, "error": a.error,
            })).collect::<Vec<_>>(),
            "tally": rows,
            "total": answered,
            "times": args.times,
            "state": run_state(answers.len(), args.times),
        });
        emit_json(&doc)?;
        return Ok(finished(answers.len(), args.times));
    }
    let recorded: Vec<String> = request.recorded.iter().map(|c| c.display()).collect();
    let mut text = format!(
        "step {step} of trace {} re-sent {} to {url} (model {model})\n",
        original.row.id,
        tracer_trace::words::plural(answers.len(), "time")
    );
    if let Some(mcp) = &args.tools_from {
        text.push_str(&format!("tools from {mcp}: {}\n", tool_names.join(", ")));
    }
    if !edits.is_empty() {
        let edits = tracer_wire::safe_text::one_line(&edits.join(", ")).into_owned();
        text.push_str(&format!("edits: {edits}\n"));
    }
    text.push_str(&format!(
        "recorded: {}\n\n",
        if recorded.is_empty() {
            "(no tool call)".to_string()
        } else {
            recorded.join(", ")
        }
    ));
    text.push_str(&tally::render(&rows, answered));
    for (index, answer) in answers.iter().enumerate() {
        if let Some(error) = &answer.error {
            text.push_str(&format!("run {} failed: {error}\n", index + 1));
        }
    }
    text.push_str(&stopped_early(answers.len(), args.times));
    emit(&text)?;
    Ok(finished(answers.len(), args.times))
}

/// A folder for the editor's file, removed when dropped.
fn tempfile_dir() -> anyhow::Result<crate::run::Scratch> {
    crate::run::Scratch::create()
        .map_err(|e| anyhow::anyhow!("a scratch folder for the editor: {e}"))
}
