//! `tracer serve-replay FILE`: a recorded trace standing in for its model (or MCP) server.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::ValueEnum;

use super::ServeReplayArgs;
use crate::replay_server::{Pace, ReplayServer};
use tracer_export::hop_log::HopLog;
use tracer_wire::hop::Role;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReplayRoleArg {
    /// The model server (Ollama, OpenAI-compatible, Anthropic)
    Model,
    /// The MCP server
    Mcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PaceArg {
    /// Whole answers at once
    Fast,
    /// Streams chunk by chunk at their recorded timing
    Recorded,
}

pub async fn run(args: ServeReplayArgs) -> anyhow::Result<ExitCode> {
    // Heard from before anything listens: a signal never finds the default action.
    let shutdown = tracer_serve::stop_signal::shutdown_on_signals("tracer serve-replay");
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let log =
        HopLog::from_json(&bytes).with_context(|| format!("reading {}", args.file.display()))?;
    let role = match args.role {
        ReplayRoleArg::Model => Role::Model,
        ReplayRoleArg::Mcp => Role::Mcp,
    };
    let pace = match args.pace {
        PaceArg::Fast => Pace::Fast,
        PaceArg::Recorded => Pace::Recorded,
    };
    let server = ReplayServer::from_hop_log(&log, role)
        .with_context(|| format!("serving {}", args.file.display()))?
        .with_pace(pace);
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let address = listener.local_addr()?;
    tracer_serve::say!(
        "tracer serve-replay: answering as the recorded {role} of trace {} ({} recorded requests) on http://{address}",
        log.trace_id(),
        server.recordings().len()
    );
    for recording in server.recordings() {
        tracer_serve::say!(
            "  hop {:>2}  {} {}",
            recording.number,
            tracer_wire::safe_text::one_line(&recording.method),
            tracer_wire::safe_text::one_line(&recording.path)
        );
    }
    Arc::new(server).serve(listener, shutdown).await?;
    Ok(ExitCode::SUCCESS)
}
