//! notes-agent: the reference agent host (`POST /agent {"message"}` runs the tool loop).
//! Flags: `tracer_reference::agent::cli`; everything else is in the library.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use tracer_reference::agent::cli::AgentArgs;
use tracer_reference::agent::{Agent, ConfigError, McpServerSpec};

fn main() -> ExitCode {
    let (args, matches) = AgentArgs::parse_with_order();
    tracer_serve::logging::init_stderr_with("info");
    match run(args, &matches) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracer_serve::say!("notes-agent: {error:#}");
            // A flag's value that cannot work is a usage mistake, as for clap's own checks.
            if error.downcast_ref::<ConfigError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn run(args: AgentArgs, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    let listen = args.listen;
    let config = args.into_config(matches, |name| std::env::var(name).ok())?;
    let agent = Arc::new(Agent::new(&config)?);
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        // Heard from before anything listens: a signal never finds the default action.
        let shutdown = tracer_serve::stop_signal::shutdown_on_signals("notes-agent");
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let mcp: Vec<String> = config
            .mcp_servers
            .iter()
            .map(McpServerSpec::address)
            .collect();
        tracing::info!(
            listen = %listener.local_addr()?,
            api = config.model_api.as_str(),
            model = %config.model,
            model_url = %config.chat_url(),
            ?mcp,
            "notes-agent ready"
        );
        tracer_reference::agent::serve_until(listener, agent, shutdown).await?;
        Ok(())
    })
}
