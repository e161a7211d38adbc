//! `tracer mcp`: serve the database read-only to MCP clients, over Streamable HTTP (127.0.0.1 by
//! default) or stdio (for a host's config).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::trace_mcp::{DEFAULT_LISTEN, TraceServer};
use tracer_reference::notes_server::{serve_http, serve_stdio};
use tracer_serve::stop_signal::shutdown_on_signals;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Speak MCP on stdin/stdout (for a host's config: `tracer --db /abs/tracer.db mcp --stdio`)
    #[arg(long, conflicts_with = "listen")]
    pub stdio: bool,

    /// Where to serve Streamable HTTP (`POST /mcp`)
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN,
          value_parser = tracer_serve::parse_listen)]
    pub listen: std::net::SocketAddr,
}

pub async fn run(db: &Path, args: McpArgs) -> anyhow::Result<ExitCode> {
    let server = TraceServer::open(db).await?;
    if args.stdio {
        tracing::info!(db = %db.display(), "tracer mcp on stdio (read-only)");
        let (stop, _) = shutdown_on_signals("tracer mcp").into_parts();
        tokio::select! {
            served = serve_stdio(&server, tokio::io::stdin(), tokio::io::stdout()) => {
                served.context("serving MCP on stdio")?;
            }
            () = stop => {}
        }
        server.store().close().await;
        return Ok(ExitCode::SUCCESS);
    }
    // Heard from before anything listens: a signal never finds the default action.
    let shutdown = shutdown_on_signals("tracer mcp");
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    if tracer_serve::reachable_from_elsewhere(address) {
        tracer_serve::say!(
            "tracer mcp: warning: listening on {address}, not a loopback address: anyone who \
             can reach it can read every recorded trace (bodies included), unauthenticated"
        );
    }
    tracer_serve::say!(
        "tracer mcp: {} (read-only) at http://{address}/mcp; Ctrl-C stops",
        db.display()
    );
    serve_http(listener, server.clone(), shutdown)
        .await
        .context("serving MCP over HTTP")?;
    server.store().close().await;
    Ok(ExitCode::SUCCESS)
}
