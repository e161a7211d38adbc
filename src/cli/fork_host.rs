//! Who drives a fork (`tracer fork`): the reference processes, a running agent through the
//! recorded routes, or a command run again under `tracer run`; shown and confirmed first.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use super::run_cmd::RunArgs;
use super::run_fork::RunFork;
use crate::fork::plan::ForkPlan;
use crate::fork::reference;
use crate::fork::steer::ForkSteer;
use crate::replay::source;
use tracer_store::Store;

/// Who drives the fork: the reference processes tracer starts, or a command run again.
pub(super) enum Host {
    Reference,
    /// The agent still runs behind routes no proxy serves now: a fork proxy takes them.
    Routes(Vec<tracer_store::proxy_routes::ServedRoute>),
    Command(RunCommandLine),
}

/// A command to run again, where, and with which `tracer run` options.
pub(super) struct RunCommandLine {
    pub(super) argv: Vec<String>,
    pub(super) cwd: PathBuf,
    pub(super) options: Vec<String>,
}

/// The `tracer run` that recorded a trace, if one did (not a forward-proxy client's id).
pub(super) fn run_id_of(trace: &tracer_live::load::LoadedTrace) -> Option<String> {
    (trace.hops.iter())
        .filter_map(|hop| hop.start.run_id.clone())
        .find(|id| !id.starts_with("process:"))
}

/// The hops of the trace's run outside the trace (its side calls and start-up).
pub(super) async fn run_siblings(
    store: &Store,
    trace: &tracer_live::load::LoadedTrace,
    run_id: Option<&str>,
) -> anyhow::Result<Vec<tracer_trace::RecordedHop>> {
    let Some(run_id) = run_id else {
        return Ok(Vec::new());
    };
    let mut traces: Vec<String> = (store.run_hops(run_id).await?)
        .into_iter()
        .filter_map(|hop| hop.trace_id)
        .filter(|id| id != trace.id())
        .collect();
    traces.sort();
    traces.dedup();
    let mut hops = Vec::new();
    for id in traces {
        hops.extend(source::from_store(store, &id).await?.hops);
    }
    Ok(hops)
}

pub(super) async fn host_of(
    store: &Store,
    command: &[String],
    original: &tracer_live::load::LoadedTrace,
    plan: &ForkPlan,
    run_id: Option<&str>,
) -> anyhow::Result<Host> {
    let recorded = match run_id {
        Some(id) => store.run_command(id).await?,
        None => None,
    };
    let options: Vec<String> = recorded
        .as_ref()
        .and_then(|r| serde_json::from_str(&r.options).ok())
        .unwrap_or_default();
    if !command.is_empty() {
        return Ok(Host::Command(RunCommandLine {
            argv: command.to_vec(),
            cwd: std::env::current_dir()?,
            options,
        }));
    }
    let reference = reference::is_reference(original, plan);
    if plan.entry.is_some()
        && let Some(served) = crate::fork::routes::recorded_routes(store, original).await?
        && crate::fork::routes::agent_is_up(original).await
    {
        // The agent runs behind routes no proxy serves now: the fork takes them. While the
        // recording proxy still serves them, notes-agent is started anew instead.
        match crate::fork::routes::still_served(&served) {
            None => return Ok(Host::Routes(served)),
            Some(_) if reference => return Ok(Host::Reference),
            Some(_) => return Ok(Host::Routes(served)),
        }
    }
    if reference {
        return Ok(Host::Reference);
    }
    match recorded {
        Some(recorded) => Ok(Host::Command(RunCommandLine {
            argv: serde_json::from_str(&recorded.argv)?,
            cwd: PathBuf::from(recorded.cwd),
            options,
        })),
        None => anyhow::bail!(
            "trace {} was recorded neither by `tracer run` (whose command tracer fork runs again) \
             nor from notes-agent behind an agent route (which it starts itself): give the command \
             that makes its requests after --, and point it at the addresses it prints",
            plan.original
        ),
    }
}

/// Says what will run, and asks (unless --yes).
pub(super) fn confirmed(line: &RunCommandLine, sandbox: bool, yes: bool) -> anyhow::Result<bool> {
    let shown: Vec<String> = line.argv.iter().map(|a| shell_word(a)).collect();
    tracer_serve::say!(
        "tracer fork runs again, in {}{}:\n  {}",
        line.cwd.display(),
        if sandbox {
            " (a sandbox copy of it)"
        } else {
            ""
        },
        shown.join(" ")
    );
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        anyhow::bail!("not run: add --yes to run it without being asked");
    }
    eprint!("Run it? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The command run again under `tracer run` with the fork's steer; (None, why it failed).
pub(super) async fn run_again(
    db: &Path,
    line: RunCommandLine,
    steer: Arc<ForkSteer>,
    fork_id: &str,
) -> anyhow::Result<(Option<String>, Option<String>)> {
    #[derive(clap::Parser)]
    struct RunLine {
        #[command(flatten)]
        run: RunArgs,
    }
    let argv = ["run".to_string()]
        .into_iter()
        .chain(line.options.iter().cloned())
        .chain(["--quiet".to_string(), "--".to_string()])
        .chain(line.argv.iter().cloned());
    let mut run = <RunLine as clap::Parser>::try_parse_from(argv)
        .map_err(|e| anyhow::anyhow!("the recorded run options: {e}"))?
        .run;
    run.fork = Some(RunFork {
        steer,
        run_id: fork_id.to_string(),
        cwd: line.cwd,
        options: line.options,
    });
    let code = super::run_cmd::run(db, run).await?;
    let failed = (code != ExitCode::SUCCESS).then(|| format!("the command exited with {code:?}"));
    Ok((None, failed))
}

/// The fork's trace: of the traces its hops are in, the one with the most.
pub(super) async fn fork_trace(store: &Store, fork_id: &str) -> anyhow::Result<Option<String>> {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for hop in store.run_hops(fork_id).await? {
        if let Some(trace) = hop.trace_id {
            *counts.entry(trace).or_default() += 1;
        }
    }
    Ok(counts.into_iter().max_by_key(|(_, n)| *n).map(|(t, _)| t))
}
