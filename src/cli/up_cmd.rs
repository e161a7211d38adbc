//! `tracer up`: the article's topology with tracer in the middle, until Ctrl-C.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::process::ExitCode;

use super::UpArgs;
use super::proxy_cmd::route_table;
use super::stdout_text::{out, outln};
use super::telemetry_beside::{Keeping, TelemetryBeside};
use super::ui_beside::{UiBeside, tap_of};
use crate::demo::ollama_has_model;
use crate::topology::{ModelUpstream, Topology, TopologySpec};
use tracer_export::exporter::start_configured as start_exporter;
use tracer_reference::agent::config::ollama_base_url;
use tracer_store::Store;

pub async fn run(db: &Path, args: UpArgs) -> anyhow::Result<ExitCode> {
    let at = |port: u16| SocketAddr::new(args.host, port);
    let internal = |port: u16| SocketAddr::new(IpAddr::from([127, 0, 0, 1]), port);
    let ollama = args
        .ollama
        .clone()
        .unwrap_or_else(|| ollama_base_url(std::env::var("OLLAMA_HOST").ok().as_deref()));
    let model = if args.recorded {
        ModelUpstream::Recorded
    } else {
        if let Some(advice) = model_server_advice(&ollama, &args.model).await {
            tracer_serve::say!("{advice}");
        }
        ModelUpstream::Url(ollama.clone())
    };
    let spec = TopologySpec {
        agent: at(args.agent_port),
        mcp: at(args.mcp_port),
        model_listen: at(args.model_port),
        agent_internal: internal(args.agent_internal_port),
        mcp_internal: internal(args.mcp_internal_port),
        model,
        model_name: args.model.clone(),
        notes_file: args.notes.clone(),
        redact: args.redaction.redact(),
        live: None,
        steer: None,
        run_id: None,
    };
    // Heard from before anything listens: a signal never finds the default action.
    let shutdown = tracer_serve::stop_signal::shutdown_on_signals("tracer up");
    let otlp = args.otlp.config()?;
    let store = Store::open(db).await?;
    let ui = UiBeside::start(&args.ui, &store).await?;
    let spec = TopologySpec {
        live: tap_of(ui.as_ref()),
        ..spec
    };
    let keeping = Keeping {
        redact: args.redaction.redact(),
        max_body: tracer_record::proxy::ProxySettings::default().max_body,
        run_id: None,
    };
    let telemetry = TelemetryBeside::start_if(&args.otlp_listen, &store, keeping).await?;
    let mut topology = Topology::start(spec, store.clone()).await?;
    topology.announce_routes();
    if tracer_serve::reachable_from_elsewhere(at(args.agent_port)) {
        tracer_serve::say!(
            "tracer up: warning: listening on {}, not a loopback address: anyone who can reach \
             it can use the agent, the notes tools and the model unauthenticated",
            args.host
        );
    }
    outln!("tracer up: recording to {}", db.display())?;
    out!("{}", route_table(&topology.routes))?;
    if args.recorded {
        outln!(
            "model: the recorded buy-milk model built into tracer, on {} (it answers the article's request)",
            topology.model_upstream
        )?;
    }
    outln!(
        "notes-agent listens on {} (model {}, MCP through the proxy), notes-server on {} (notes in {})",
        internal(args.agent_internal_port),
        args.model,
        internal(args.mcp_internal_port),
        args.notes.display()
    )?;
    outln!()?;
    outln!("Try:")?;
    outln!(
        "  curl -s {} -H 'Content-Type: application/json' -d '{{\"message\":\"Add buy milk to my notes\"}}'",
        topology.agent_url()
    )?;
    outln!("  tracer --db {} ls", db.display())?;
    outln!("  tracer --db {} tui", db.display())?;
    outln!("Ctrl-C to stop.")?;
    if let Some(ui) = &ui {
        ui.say();
    }
    if let Some(telemetry) = &telemetry {
        tracer_serve::say!("{}", telemetry.line());
    }
    let exporter = start_exporter(otlp, &store, false);
    let report = topology.run_until(shutdown).await?;
    if let Some(ui) = ui {
        ui.finish().await;
    }
    if let Some(telemetry) = telemetry {
        tracer_serve::say!("{}", telemetry.finish().await.0);
    }
    if let Some(exporter) = exporter {
        let report = exporter.finish(tracer_export::exporter::FINISH_GRACE).await;
        tracer_serve::say!("tracer up: {}", report.line());
    }
    store.close().await;
    tracer_serve::say!("tracer up: stopped; {}", report.summary());
    Ok(ExitCode::SUCCESS)
}

/// What to tell a user whose model server does not answer (or lacks the model), if anything.
async fn model_server_advice(ollama: &str, model: &str) -> Option<String> {
    if ollama_has_model(ollama, model).await {
        return None;
    }
    let ollama = tracer_wire::redact::redact_userinfo(ollama);
    Some(format!(
        "tracer up: warning: no model server with {model} answers at {ollama}; requests to the agent \
         will get a 502 until one does.\n  Start Ollama and pull the model: `ollama serve`, then \
         `ollama pull {model}`;\n  or run `tracer up --recorded` to stand the built-in recorded \
         buy-milk model in for it."
    ))
}
