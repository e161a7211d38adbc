//! `tracer up`: the article's topology with tracer in the middle, until Ctrl-C.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::process::ExitCode;

use super::UpArgs;
use super::proxy_cmd::route_table;
use crate::reference::agent::config::ollama_base_url;
use crate::store::Store;
use crate::topology::{Topology, TopologySpec};

pub async fn run(db: &Path, args: UpArgs) -> anyhow::Result<ExitCode> {
    let at = |port: u16| SocketAddr::new(args.host, port);
    let internal = |port: u16| SocketAddr::new(IpAddr::from([127, 0, 0, 1]), port);
    let model_upstream = args
        .ollama
        .clone()
        .unwrap_or_else(|| ollama_base_url(std::env::var("OLLAMA_HOST").ok().as_deref()));
    let spec = TopologySpec {
        agent: at(args.agent_port),
        mcp: at(args.mcp_port),
        model: at(args.model_port),
        agent_internal: internal(args.agent_internal_port),
        mcp_internal: internal(args.mcp_internal_port),
        model_upstream,
        model_name: args.model.clone(),
        notes_file: args.notes.clone(),
    };
    let store = Store::open(db).await?;
    let topology = Topology::start(spec, store.clone()).await?;
    println!("tracer up: recording to {}", db.display());
    print!("{}", route_table(&topology.routes));
    println!(
        "notes-agent listens on {} (model {}, MCP through the proxy), notes-server on {} (notes in {})",
        internal(args.agent_internal_port),
        args.model,
        internal(args.mcp_internal_port),
        args.notes.display()
    );
    println!();
    println!("Try:");
    println!(
        "  curl -s {} -H 'Content-Type: application/json' -d '{{\"message\":\"Add buy milk to my notes\"}}'",
        topology.agent_url()
    );
    println!("  tracer --db {} ls", db.display());
    println!("  tracer --db {} tui", db.display());
    println!("Ctrl-C to stop.");
    let report = topology
        .run_until(crate::stop_signal::stop_requested("tracer up"))
        .await?;
    store.close().await;
    eprintln!("tracer up: stopped; {}", report.summary());
    Ok(ExitCode::SUCCESS)
}
