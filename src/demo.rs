//! `tracer demo`: the article on one machine. Runs notes-server, notes-agent and the proxy on
//! free ports, with a live Ollama when one has the model, else the recorded buy-milk model built
//! into the binary; sends "Add buy milk to my notes" and returns the trace it recorded.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::topology::{ModelUpstream, Topology, TopologySpec};
use tracer_store::Store;

/// What the user types in the article.
pub const BUY_MILK_MESSAGE: &str = "Add buy milk to my notes";

/// Where the model's answers came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    LiveOllama { url: String },
    Recorded,
}

#[derive(Debug)]
pub struct DemoOutcome {
    pub dir: PathBuf,
    pub db: PathBuf,
    pub notes: PathBuf,
    pub model: ModelSource,
    pub reply: serde_json::Value,
    pub trace_id: String,
}

/// Runs the demo in `dir`, recording into `db` (None: `tracer.db` in `dir`). `ollama` is the
/// base URL to try for a live model (None: recorded); `redact` as `--no-redact` leaves it.
pub async fn run(
    dir: &Path,
    db: Option<&Path>,
    ollama: Option<&str>,
    model_name: &str,
    redact: bool,
) -> anyhow::Result<DemoOutcome> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let db = db.map_or_else(|| dir.join("tracer.db"), Path::to_path_buf);
    let notes = dir.join("notes.txt");
    let store = Store::open(&db).await?;
    // A database given with --db may hold traces already: the demo's is the one it adds.
    let before: std::collections::HashSet<String> =
        store.traces().await?.into_iter().map(|t| t.id).collect();

    let live = match ollama {
        Some(url) if ollama_has_model(url, model_name).await => Some(url.to_string()),
        _ => None,
    };
    let (upstream, model) = match &live {
        Some(url) => (
            ModelUpstream::Url(url.clone()),
            ModelSource::LiveOllama { url: url.clone() },
        ),
        None => (ModelUpstream::Recorded, ModelSource::Recorded),
    };
    let any = "127.0.0.1:0".parse().context("parsing a listen address")?;
    let spec = TopologySpec {
        agent: any,
        mcp: any,
        model_listen: any,
        agent_internal: any,
        mcp_internal: any,
        model: upstream,
        model_name: model_name.to_string(),
        notes_file: notes.clone(),
        redact,
        live: None,
        steer: None,
        run_id: None,
    };
    let topology = Topology::start(spec, store.clone()).await?;
    let reply = ask(&topology.agent_url(), BUY_MILK_MESSAGE).await;
    topology.stop().await?;
    let reply = reply?;
    let trace_id = store
        .traces()
        .await?
        .into_iter()
        .find(|trace| trace.kind == "request" && !before.contains(&trace.id))
        .map(|trace| trace.id)
        .context("the demo recorded no trace")?;
    store.close().await;
    Ok(DemoOutcome {
        dir: dir.to_path_buf(),
        db,
        notes,
        model,
        reply,
        trace_id,
    })
}

/// Whether an Ollama server answers at `url` and has `model` pulled.
pub async fn ollama_has_model(url: &str, model: &str) -> bool {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let Ok(uri) = format!("{}/api/tags", url.trim_end_matches('/')).parse::<http::Uri>() else {
        return false;
    };
    let answer = tokio::time::timeout(Duration::from_secs(2), async {
        let response = client.get(uri).await.ok()?;
        let body = response.into_body().collect().await.ok()?.to_bytes();
        serde_json::from_slice::<serde_json::Value>(&body).ok()
    })
    .await;
    let Ok(Some(tags)) = answer else {
        return false;
    };
    let wanted = [model.to_string(), format!("{model}:latest")];
    tags["models"].as_array().is_some_and(|models| {
        models.iter().any(|m| {
            ["name", "model"]
                .iter()
                .filter_map(|key| m[*key].as_str())
                .any(|name| wanted.iter().any(|w| w == name))
        })
    })
}

/// Sends the user's message to the agent (through the proxy) and returns its JSON reply.
async fn ask(agent_url: &str, message: &str) -> anyhow::Result<serde_json::Value> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let body = serde_json::json!({ "message": message }).to_string();
    let request = http::Request::post(agent_url)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))?;
    let response = tokio::time::timeout(Duration::from_secs(600), client.request(request))
        .await
        .context("the agent did not answer within 10 minutes")?
        .with_context(|| format!("sending the message to {agent_url}"))?;
    let status = response.status();
    let bytes = response.into_body().collect().await?.to_bytes();
    let reply: serde_json::Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("the agent answered {status} with a body that is not JSON"))?;
    if !status.is_success() {
        anyhow::bail!("the agent answered {status}: {reply}");
    }
    Ok(reply)
}
