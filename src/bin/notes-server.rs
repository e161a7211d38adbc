//! notes-server: the reference MCP server (five notes tools) over Streamable HTTP or stdio.

use anyhow::Context as _;
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use tracer_reference::notes_server::{self, NotesServer, NotesServerConfig};
use tracer_serve::stop_signal::shutdown_on_signals;

/// The reference MCP server: read, write, append, update and clear one plain-text notes file.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to serve Streamable HTTP on (POST /mcp).
    #[arg(long, default_value = notes_server::DEFAULT_LISTEN, conflicts_with = "stdio",
          value_parser = tracer_serve::parse_listen)]
    listen: SocketAddr,
    /// The notes file (created with its folder if missing).
    #[arg(long, default_value = notes_server::DEFAULT_FILE)]
    file: PathBuf,
    /// Refuse changes that would make the notes file larger than this many bytes.
    #[arg(long, default_value_t = notes_server::DEFAULT_MAX_FILE_BYTES)]
    max_bytes: u64,
    /// Answer HTTP requests as text/event-stream instead of application/json.
    #[arg(long, conflicts_with = "stdio")]
    sse: bool,
    /// Speak newline-delimited JSON-RPC on stdin/stdout instead of HTTP (logs go to stderr).
    #[arg(long)]
    stdio: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    tracer_serve::logging::init_stderr_with("info");
    let outcome = tokio::runtime::Runtime::new()
        .context("cannot start the async runtime")
        .and_then(|runtime| {
            let outcome = runtime.block_on(run(args));
            // A read of stdin may still be blocked in a thread: do not wait for it.
            runtime.shutdown_background();
            outcome
        });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracer_serve::say!("notes-server: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let config = NotesServerConfig {
        max_file_bytes: args.max_bytes,
        sse: args.sse,
        ..NotesServerConfig::new(&args.file)
    };
    // Heard from before anything is served: a signal never finds the default action.
    let shutdown = shutdown_on_signals("notes-server");
    let server = NotesServer::open(config).await?;
    if args.stdio {
        tracing::info!(file = %args.file.display(), "notes-server on stdio");
        let (requested, _) = shutdown.into_parts();
        tokio::select! {
            served = notes_server::serve_stdio(&server, tokio::io::stdin(), tokio::io::stdout()) => served?,
            () = requested => {}
        }
        return Ok(());
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    tracing::info!(file = %args.file.display(), "notes-server on http://{address}/mcp");
    notes_server::serve_http(listener, server, shutdown).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_is_consistent() {
        <super::Args as clap::CommandFactory>::command().debug_assert();
    }
}
