//! A `tracer run` made by `tracer fork` (its proxy steered, its hops under the fork's id, run in
//! the fork's folder), and the `tracer run` options of a command line, kept so a fork runs the same.

use std::path::PathBuf;
use std::sync::Arc;

/// A run made by `tracer fork`: its proxy steered, its hops under the fork's id, the command run
/// in the fork's folder, the options it was recorded with.
#[derive(Clone)]
pub struct RunFork {
    pub steer: Arc<dyn tracer_record::proxy::steer::Steer>,
    pub run_id: String,
    pub cwd: PathBuf,
    pub options: Vec<String>,
}

impl std::fmt::Debug for RunFork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunFork")
            .field("run_id", &self.run_id)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

/// The `tracer run` options of a command line (after `run`, before `--`), without those that
/// only say where to record or what to print (`--db`, `--json`, `--show`, `--quiet`).
pub fn run_options_of(argv: &[String]) -> Vec<String> {
    let Some(at) = argv.iter().position(|a| a == "run") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut rest = argv[at + 1..].iter().take_while(|a| *a != "--");
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--db" | "--prices" => {
                rest.next();
            }
            "--json" | "--show" | "--quiet" | "-q" | "--verbose" => {}
            _ if arg.starts_with("--db=") || arg.starts_with("--prices=") => {}
            _ if arg.starts_with("-v") && arg[1..].chars().all(|c| c == 'v') => {}
            _ => out.push(arg.clone()),
        }
    }
    out
}

/// Writes the command a run runs, its folder and its options (a fork's own, else this command
/// line's), so a fork of its traces can run it again.
pub async fn keep_command(
    store: &tracer_store::Store,
    run_id: &str,
    command: &[String],
    fork: Option<&RunFork>,
    cwd: &std::path::Path,
    started: i64,
) -> anyhow::Result<()> {
    let options = match fork {
        Some(fork) => fork.options.clone(),
        None => run_options_of(&std::env::args().collect::<Vec<_>>()),
    };
    store
        .insert_run_command(&tracer_store::forks::RunCommand {
            run_id: run_id.to_string(),
            argv: serde_json::to_string(command)?,
            options: serde_json::to_string(&options)?,
            cwd: cwd.display().to_string(),
            started_unix_ns: started,
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::run_options_of;

    #[test]
    fn run_options_leave_out_where_to_record_and_what_to_print() {
        let argv: Vec<String> = [
            "tracer",
            "-v",
            "run",
            "--db",
            "x.db",
            "--json",
            "--resolve",
            "h:443=127.0.0.1:9",
            "--no-redact",
            "--",
            "claude",
            "--db",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            run_options_of(&argv),
            ["--resolve", "h:443=127.0.0.1:9", "--no-redact"]
        );
        assert!(run_options_of(&["tracer".to_string()]).is_empty());
    }
}
