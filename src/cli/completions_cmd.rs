//! `tracer completions SHELL`: the completion script for a shell, generated from the clap types.

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, CompletionsArgs};

pub fn run(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "tracer", &mut script);
    match std::io::stdout().lock().write_all(&script) {
        // `tracer completions bash | head` is fine.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(error) => Err(anyhow::anyhow!("writing the completion script: {error}")),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}
