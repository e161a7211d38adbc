//! The article's topology with tracer in the middle, in one process: notes-server and
//! notes-agent on internal addresses, the recording proxy on the addresses a reader talks to,
//! and live grouping of what it records. Used by `tracer up` and `tracer demo`.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::proxy::{Proxy, ProxySettings, Route};
use crate::reference::agent::{AgentConfig, McpServerSpec, ModelApi};
use crate::reference::notes_server::{NotesServer, NotesServerConfig};
use crate::store::{Recorder, Store, WriterReport};
use crate::trace::correlate::{Mode, correlate, group_until};
use crate::trace::group::GroupOptions;

/// Where everything listens. Port 0 picks a free port.
#[derive(Debug, Clone)]
pub struct TopologySpec {
    /// The proxy's agent route: what the user calls (the article's 8081).
    pub agent: SocketAddr,
    /// The proxy's MCP route (the article's 8080).
    pub mcp: SocketAddr,
    /// The proxy's model route (11435), in front of `model_upstream`.
    pub model: SocketAddr,
    /// Where notes-agent and notes-server really listen, behind the proxy.
    pub agent_internal: SocketAddr,
    pub mcp_internal: SocketAddr,
    /// The model server: Ollama's base URL, or a recorded model standing in for it.
    pub model_upstream: String,
    pub model_name: String,
    pub notes_file: PathBuf,
}

/// The running topology; `stop` shuts it down and flushes the record.
pub struct Topology {
    pub routes: Vec<Route>,
    stop: watch::Sender<bool>,
    proxy: JoinHandle<crate::proxy::ProxyStats>,
    writer: JoinHandle<WriterReport>,
    services: Vec<JoinHandle<()>>,
    grouping: JoinHandle<()>,
    store: Store,
}

/// How often hops are grouped into traces while the topology runs.
const GROUPING_INTERVAL: Duration = Duration::from_millis(200);

impl Topology {
    pub async fn start(spec: TopologySpec, store: Store) -> anyhow::Result<Topology> {
        let mcp_listener = bind("notes-server", spec.mcp_internal).await?;
        let agent_listener = bind("notes-agent", spec.agent_internal).await?;
        let mcp_internal = mcp_listener.local_addr()?;
        let agent_internal = agent_listener.local_addr()?;
        let routes = vec![
            Route::new(
                "agent",
                "agent",
                &spec.agent.to_string(),
                &format!("http://{agent_internal}"),
            )
            .map_err(anyhow::Error::msg)?,
            Route::new(
                "mcp",
                "notes",
                &spec.mcp.to_string(),
                &format!("http://{mcp_internal}"),
            )
            .map_err(anyhow::Error::msg)?,
            Route::new(
                "model",
                "model",
                &spec.model.to_string(),
                &spec.model_upstream,
            )
            .map_err(anyhow::Error::msg)?,
        ];
        let proxy = Proxy::bind(routes, ProxySettings::default()).await?;
        let routes = proxy.routes();
        let (stop, stopped) = watch::channel(false);
        let until_stopped = |mut rx: watch::Receiver<bool>| async move {
            let _ = rx.changed().await;
        };

        let server = NotesServer::open(NotesServerConfig::new(&spec.notes_file))
            .await
            .with_context(|| format!("opening the notes file {}", spec.notes_file.display()))?;
        let server_stop = until_stopped(stopped.clone());
        let notes = tokio::spawn(async move {
            if let Err(error) =
                crate::reference::notes_server::serve_http(mcp_listener, server, server_stop).await
            {
                tracing::warn!(%error, "notes-server stopped");
            }
        });

        let mut agent_config =
            AgentConfig::new(ModelApi::Ollama, format!("http://{}", routes[2].listen));
        agent_config.model = spec.model_name.clone();
        agent_config.mcp_servers = vec![McpServerSpec::Http {
            url: format!("http://{}/mcp", routes[1].listen),
        }];
        let agent_stop = until_stopped(stopped.clone());
        let agent_host = std::sync::Arc::new(
            crate::reference::agent::Agent::new(&agent_config)
                .context("configuring notes-agent")?,
        );
        let agent = tokio::spawn(async move {
            if let Err(error) =
                crate::reference::agent::serve_until(agent_listener, agent_host, agent_stop).await
            {
                tracing::warn!(%error, "notes-agent stopped");
            }
        });

        let (recorder, writer) = Recorder::spawn(store.clone())?;
        let proxy = tokio::spawn(proxy.run(recorder, until_stopped(stopped.clone())));
        let grouping = tokio::spawn(group_until(
            store.clone(),
            GROUPING_INTERVAL,
            until_stopped(stopped),
        ));
        Ok(Topology {
            routes,
            stop,
            proxy,
            writer,
            services: vec![notes, agent],
            grouping,
            store,
        })
    }

    /// The address a user sends `POST /agent` to.
    pub fn agent_url(&self) -> String {
        format!("http://{}/agent", self.routes[0].listen)
    }

    /// Stops every part, waits for in-flight hops, writes them and groups them.
    pub async fn stop(self) -> anyhow::Result<WriterReport> {
        let _ = self.stop.send(true);
        self.proxy.await.context("stopping the proxy")?;
        let report = self.writer.await.context("flushing the record")?;
        let _ = self.grouping.await;
        for service in self.services {
            let _ = tokio::time::timeout(Duration::from_secs(5), service).await;
        }
        if report.journal_left.is_none() {
            correlate(&self.store, GroupOptions::default(), Mode::Unassigned).await?;
        }
        Ok(report)
    }

    /// Runs until `signal` resolves, then stops.
    pub async fn run_until(self, signal: impl Future<Output = ()>) -> anyhow::Result<WriterReport> {
        signal.await;
        self.stop().await
    }
}

async fn bind(who: &str, addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .with_context(|| format!("{who} cannot listen on {addr}"))
}
