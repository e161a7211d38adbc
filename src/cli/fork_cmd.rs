//! `tracer fork TRACE --at N [edits]`: the trace run again, its messages before N answered from
//! the recording, N edited, the rest live; recorded as a trace of its own and diffed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::eval_cmd::parse_seconds;
use super::fork_host::{Host, confirmed, fork_trace, host_of, run_again, run_id_of, run_siblings};
use super::stdout_text::{emit, emit_json};
use crate::compare::diff::Diff;
use crate::compare::diff_text::render;
use crate::compare::load::load_run;
use crate::compare::step_edits::{self, SetEdit};
use crate::fork::edits::{ForkEdits, ToolReturn};
use crate::fork::plan::{ForkPlan, Target};
use crate::fork::report::{ForkReport, local_refusal};
use crate::fork::steer::ForkSteer;
use crate::fork::{gate, reference};
use crate::replay::source;
use tracer_live::correlate::group_new_hops;
use tracer_store::Store;
use tracer_store::forks::{ForkEnd, ForkRow};

#[derive(Debug, Args)]
pub struct ForkArgs {
    /// The trace to fork: an id or an unambiguous prefix
    #[arg(value_name = "TRACE")]
    pub trace: String,
    /// The message to fork at, as `tracer show` numbers them: those before it are answered from
    /// the recording, it is edited, and everything from it on goes live
    #[arg(long, value_name = "N")]
    pub at: usize,
    /// Set what a JSON Pointer names in message N's body (repeatable)
    #[arg(long = "set", value_name = "POINTER=JSON")]
    pub set: Vec<SetEdit>,
    /// Message N's whole body, from a JSON file
    #[arg(long, value_name = "FILE")]
    pub body: Option<PathBuf>,
    /// Open message N's body in $VISUAL or $EDITOR first
    #[arg(long)]
    pub edit: bool,
    /// Ask this model in every model request from N on
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Give a tool another description in every model request from N on (repeatable)
    #[arg(long = "tool-description", value_name = "NAME=TEXT", value_parser = parse_described)]
    pub tool_description: Vec<(String, String)>,
    /// What the tools/call at N returns, instead of running it
    #[arg(long, value_name = "TEXT", conflicts_with = "error")]
    pub result: Option<String>,
    /// The tools/call at N fails with this text, instead of running
    #[arg(long, value_name = "TEXT")]
    pub error: Option<String>,
    /// The model server the live part asks (a base URL), instead of the recorded one
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// The notes file notes-server owns, for a trace of the reference agent
    #[arg(long, value_name = "FILE", default_value = "notes.md")]
    pub notes: PathBuf,
    /// Run even though calls before N would run again for real (the host's own tools that the
    /// replayed answers ask for, MCP over stdio, a WebSocket session)
    #[arg(long)]
    pub allow_local_tools: bool,
    /// Run the command in a throwaway copy of its working folder (a git worktree where it is a
    /// repository, a copy otherwise), so the host's own tools change the copy
    #[arg(long)]
    pub sandbox: bool,
    /// Run the recorded command of a `tracer run` trace without asking first
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Seconds to wait for the agent's answer
    #[arg(long, value_name = "SECONDS", default_value = "600", value_parser = parse_seconds)]
    pub timeout: Duration,
    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
    /// The command to run instead of the recorded one (for a host tracer does not start), after `--`
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

fn parse_described(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, description)) if !name.is_empty() => {
            Ok((name.to_string(), description.to_string()))
        }
        _ => Err(format!("expected NAME=TEXT, not `{text}`")),
    }
}

impl ForkArgs {
    fn edits(&self) -> anyhow::Result<ForkEdits> {
        let body = match &self.body {
            Some(path) => Some(step_edits::body_from(path)?),
            None => None,
        };
        let tool_return = match (&self.result, &self.error) {
            (Some(text), _) => Some(ToolReturn {
                text: text.clone(),
                is_error: false,
            }),
            (None, Some(text)) => Some(ToolReturn {
                text: text.clone(),
                is_error: true,
            }),
            (None, None) => None,
        };
        Ok(ForkEdits {
            sets: self.set.clone(),
            body,
            model: self.model.clone(),
            tool_descriptions: self.tool_description.clone(),
            tool_return,
            upstream: self.upstream.clone(),
        })
    }
}

pub async fn run(db: &Path, args: ForkArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(db).await?;
    let outcome = fork(db, &store, &args).await;
    store.close().await;
    outcome
}

async fn fork(db: &Path, store: &Store, args: &ForkArgs) -> anyhow::Result<ExitCode> {
    group_new_hops(store).await?;
    let original = source::from_store(store, &args.trace).await?;
    let run_id = run_id_of(&original);
    let others = run_siblings(store, &original, run_id.as_deref()).await?;
    let mut edits = args.edits()?;
    if args.edit {
        edits.body = Some(edit_in_editor(&original, args.at, &edits)?);
    }
    let plan = ForkPlan::new(&original, args.at, edits, &others)?;
    if !plan.local_calls.is_empty() && !args.allow_local_tools && !args.sandbox {
        tracer_serve::say!("{}", local_refusal(&plan));
        return Ok(ExitCode::from(2));
    }
    let mut host = host_of(store, &args.command, &original, &plan, run_id.as_deref()).await?;
    let mut sandbox_words = None;
    if let Host::Command(line) = &mut host {
        if !confirmed(line, args.sandbox, args.yes)? {
            tracer_serve::say!("tracer fork: not run");
            return Ok(ExitCode::from(2));
        }
        if args.sandbox {
            let sandbox = crate::fork::sandbox::make(&line.cwd)?;
            line.cwd = sandbox.folder;
            sandbox_words = Some(sandbox.words);
        }
    }
    let fork_id = format!("fork-{}", tracer_wire::ids::random_hex_id(8));
    let started = tracer_wire::hop::now_unix_ns();
    store
        .insert_fork(&ForkRow {
            run_id: fork_id.clone(),
            fork_of: plan.original.clone(),
            at_message: i64::try_from(plan.at).unwrap_or(i64::MAX),
            edits: plan.edits.to_json().to_string(),
            trace_id: None,
            replayed: 0,
            live_at_message: None,
            live_reason: None,
            started_unix_ns: started,
            ended_unix_ns: None,
        })
        .await?;
    let plan = Arc::new(plan);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let gate_url = format!("http://{}", listener.local_addr()?);
    let (stop_gate, gate_stop) = tokio::sync::oneshot::channel::<()>();
    let gate_task = tokio::spawn(gate::serve(
        Arc::clone(&plan),
        listener,
        tracer_serve::Shutdown::new(async move {
            let _ = gate_stop.await;
        }),
    ));
    let steer = Arc::new(ForkSteer::new(Arc::clone(&plan), &gate_url));
    let host_name = match &host {
        Host::Reference => "reference",
        Host::Routes(_) => "routes",
        Host::Command(_) => "command",
    };
    let driven = match host {
        Host::Reference => {
            let fork = reference::ReferenceFork {
                notes_file: args.notes.clone(),
                run_id: fork_id.clone(),
                timeout: args.timeout,
            };
            reference::drive(store, &plan, steer.clone(), &fork)
                .await
                .map(|d| (Some(d.trace), d.error))
        }
        Host::Routes(served) => {
            crate::fork::routes::drive(store, &plan, steer.clone(), &served, &fork_id, args.timeout)
                .await
                .map(|d| (Some(d.trace), d.error))
        }
        Host::Command(line) => run_again(db, line, steer.clone(), &fork_id).await,
    };
    let _ = stop_gate.send(());
    let _ = gate_task.await;
    let (driven_trace, answer_error) = driven?;
    group_new_hops(store).await?;
    let outcome = steer.outcome();
    let trace = match driven_trace {
        Some(trace) => Some(trace),
        None => fork_trace(store, &fork_id).await?,
    };
    store
        .end_fork(
            &fork_id,
            &ForkEnd {
                trace_id: trace.clone(),
                replayed: i64::try_from(outcome.replayed).unwrap_or(0),
                live_at_message: outcome.live.as_ref().map(|l| l.message as i64),
                live_reason: outcome.live.as_ref().map(|l| l.reason.clone()),
                ended_unix_ns: tracer_wire::hop::now_unix_ns(),
            },
        )
        .await?;
    let diff = match &trace {
        Some(trace) => {
            let a = load_run(Some(store), &plan.original).await?;
            let b = load_run(Some(store), trace).await?;
            Some(Diff::new(a, b))
        }
        None => None,
    };
    let report = ForkReport {
        plan: &plan,
        trace: trace.as_deref(),
        outcome: &outcome,
        answer_error: answer_error.as_deref(),
        sandbox: sandbox_words.as_deref(),
        parts_at: diff.as_ref().and_then(Diff::parts_at),
        host: host_name,
    };
    if args.json {
        let mut doc = report.to_json();
        doc["diff"] = diff.as_ref().map_or(json!(null), Diff::to_json);
        emit_json(&doc)?;
    } else {
        let mut text = report.text();
        if let Some(diff) = &diff {
            text.push('\n');
            text.push_str(&render(diff));
        }
        emit(&text)?;
    }
    Ok(if trace.is_some() && answer_error.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `--edit`: message N's body (after any --body and --set) opened in the editor.
fn edit_in_editor(
    original: &tracer_live::load::LoadedTrace,
    at: usize,
    edits: &ForkEdits,
) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    let plan = ForkPlan::new(original, at, ForkEdits::default(), &[])?;
    let recorded: Vec<u8> = match plan.target {
        Target::Entry => plan.entry.map(|e| e.body).unwrap_or_default(),
        Target::Request(i) => plan.exchanges[i].recording.request.clone(),
        Target::Answer(i) => plan.exchanges[i].recording.body.clone(),
    };
    let current: serde_json::Value = serde_json::from_slice(&edits.body_at(&recorded)?)?;
    let current = current.as_object().cloned().unwrap_or_default();
    let scratch = crate::run::Scratch::create()
        .map_err(|e| anyhow::anyhow!("a scratch folder for the editor: {e}"))?;
    Ok(step_edits::edit(&current, scratch.path())?)
}
