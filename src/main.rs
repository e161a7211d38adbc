//! The `tracer` binary: parse the command line, set up logging and the runtime, run, exit.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = tracer::cli::Cli::parse();
    match cli.command.log_file() {
        // A full-screen UI owns the terminal: its logs go to a file.
        Some(path) => {
            if let Err(error) = tracer::tui::log_to_file(&path) {
                tracer_serve::say!("tracer: logging to {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
        }
        None => tracer_serve::logging::init_stderr(cli.verbose),
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracer_serve::say!("tracer: starting the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(tracer::cli::run(cli));
    // A blocking read of stdin (tracer wrap) must not keep the process alive after the work ends.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match outcome {
        Ok(code) => code,
        Err(error) => {
            tracer_serve::say!("tracer: {}", tracer::cli::error_line::error_line(&error));
            ExitCode::FAILURE
        }
    }
}
