//! A fork of a trace whose host is notes-agent (`tracer up`, or notes-agent behind `tracer
//! proxy`): the reference processes and a fork-mode proxy started on free ports, and the user's
//! request sent again to the agent route.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::plan::{ForkPlan, Target};
use crate::compare::send::post_json;
use crate::topology::{ModelUpstream, Topology, TopologySpec};
use tracer_live::load::LoadedTrace;
use tracer_record::proxy::steer::Steer;
use tracer_store::Store;
use tracer_wire::hop::{Role, header_text};
use tracer_wire::trace_context::TraceParent;

/// True when the trace's host is notes-agent fronted by an agent route: its model requests say
/// `notes-agent/…` and the user's request was recorded.
pub fn is_reference(trace: &LoadedTrace, plan: &ForkPlan) -> bool {
    plan.entry.is_some()
        && trace.hops.iter().any(|hop| {
            hop.start.role == Role::Model
                && header_text(&hop.start.request_headers, "user-agent")
                    .is_some_and(|agent| agent.starts_with("notes-agent/"))
        })
}

/// How the reference fork runs.
pub struct ReferenceFork {
    pub notes_file: PathBuf,
    pub run_id: String,
    pub timeout: Duration,
}

/// What the re-driven request got.
pub struct Driven {
    pub trace: String,
    pub status: Option<u16>,
    pub error: Option<String>,
}

impl Driven {
    /// The trace `parent` opened, and what its request got.
    pub fn of(
        parent: &TraceParent,
        answer: Result<crate::compare::send::Answer, crate::compare::send::SendError>,
    ) -> Driven {
        let (status, error) = match answer {
            Ok(answer) => (Some(answer.status), None),
            Err(error) => (None, Some(error.to_string())),
        };
        Driven {
            trace: parent.trace_id_hex(),
            status,
            error,
        }
    }
}

/// Starts the reference processes behind a fork-mode proxy, sends the user's request (edited
/// when N is that request), and stops everything once it is answered and recorded.
pub async fn drive(
    store: &Store,
    plan: &ForkPlan,
    steer: Arc<dyn Steer>,
    fork: &ReferenceFork,
) -> anyhow::Result<Driven> {
    let entry = plan
        .entry
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the user's request was not recorded whole"))?;
    let model = plan.exchanges.iter().find(|e| e.role == Role::Model);
    let recorded_model = model.map(|e| e.upstream.clone()).unwrap_or_default();
    let live_model = plan.edits.upstream.clone().unwrap_or(recorded_model);
    let model_name = model
        .and_then(|e| serde_json::from_slice::<serde_json::Value>(&e.recording.request).ok())
        .and_then(|body| body["model"].as_str().map(str::to_string))
        .unwrap_or_else(|| "qwen2.5:7b".to_string());
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let spec = TopologySpec {
        agent: any,
        mcp: any,
        model_listen: any,
        agent_internal: any,
        mcp_internal: any,
        model: ModelUpstream::Url(live_model),
        model_name,
        notes_file: fork.notes_file.clone(),
        redact: true,
        live: None,
        steer: Some(steer),
        run_id: Some(fork.run_id.clone()),
    };
    let topology = Topology::start(spec, store.clone()).await?;
    let body = match (&plan.target, &plan.edited_body) {
        (Target::Entry, Some(edited)) => edited.clone(),
        _ => entry.body.clone(),
    };
    let parent = TraceParent::new_root();
    let url = format!("http://{}{}", topology.routes[0].listen, entry.path);
    let answer = post_json(&url, body, Some(&parent), fork.timeout).await;
    topology.stop().await?;
    Ok(Driven::of(&parent, answer))
}
