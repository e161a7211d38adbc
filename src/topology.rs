//! The article's topology with tracer in the middle, in one process: notes-server and
//! notes-agent on internal addresses, the recording proxy on the addresses a reader talks to,
//! and live grouping of what it records. Used by `tracer up` and `tracer demo`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::recording_beside::grouping;
use crate::replay_server::ReplayServer;
use tracer_record::proxy::ListenError;
use tracer_record::proxy::announce::announcing;
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_record::recording::{Finish, Recording};
use tracer_reference::agent::{AgentConfig, McpServerSpec, ModelApi};
use tracer_reference::notes_server::{NotesServer, NotesServerConfig};
use tracer_serve::{Shutdown, StopLevel, StopSwitch, StopWatch};
use tracer_store::{Store, WriterReport};

/// Where everything listens. Port 0 picks a free port.
#[derive(Clone)]
pub struct TopologySpec {
    /// The proxy's agent route: what the user calls (the article's 8081).
    pub agent: SocketAddr,
    /// The proxy's MCP route (the article's 8080).
    pub mcp: SocketAddr,
    /// The proxy's model route (11435), in front of `model`.
    pub model_listen: SocketAddr,
    /// Where notes-agent and notes-server really listen, behind the proxy.
    pub agent_internal: SocketAddr,
    pub mcp_internal: SocketAddr,
    /// The model server: Ollama, or the built-in recorded model standing in for it.
    pub model: ModelUpstream,
    pub model_name: String,
    pub notes_file: PathBuf,
    /// Secrets redacted in the record (`--no-redact` turns it off).
    pub redact: bool,
    /// Told of each answer as it passes (the web UI's streaming view, `tracer up --ui`).
    pub live: Option<std::sync::Arc<dyn tracer_record::proxy::LiveTap>>,
    /// Fork mode: every request steered (`tracer fork`); None forwards as is.
    pub steer: Option<Arc<dyn tracer_record::proxy::steer::Steer>>,
    /// The run id every hop carries (a fork's), so its hops group apart.
    pub run_id: Option<String>,
}

/// What the model route forwards to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelUpstream {
    /// A model server's base URL (Ollama).
    Url(String),
    /// The recorded buy-milk model built into tracer, served on a free local port.
    Recorded,
}

/// The running topology; `stop` shuts it down and flushes the record.
pub struct Topology {
    pub routes: Vec<Route>,
    /// Where the model route forwards to (the built-in recorded model's address when it runs).
    pub model_upstream: String,
    /// The user-facing half: the agent route and notes-agent. Stopped first, so a request in
    /// flight can still reach the model and the tools while it finishes.
    outer: Stage,
    /// The rest: the model and MCP routes, notes-server and the recorded model.
    inner: Stage,
    /// The hops the proxies record, grouped into traces as they arrive.
    recording: Recording,
}

/// Parts that stop together, and how far their stop has gone.
struct Stage {
    stop: StopSwitch,
    tasks: Vec<JoinHandle<()>>,
}

impl Stage {
    fn new() -> (Stage, StopWatch) {
        let (stop, watch) = StopSwitch::new();
        let stage = Stage {
            stop,
            tasks: Vec::new(),
        };
        (stage, watch)
    }

    /// Asks every part to stop at `level` and waits for them (up to `wait`).
    async fn stop(&mut self, level: StopLevel, wait: Duration) {
        self.stop.set(level);
        for task in self.tasks.drain(..) {
            let _ = tokio::time::timeout(wait, task).await;
        }
    }
}

/// How often hops are grouped into traces while the topology runs.
const GROUPING_INTERVAL: Duration = Duration::from_millis(200);

impl Topology {
    pub async fn start(spec: TopologySpec, store: Store) -> anyhow::Result<Topology> {
        let mcp_listener = bind("notes-server", spec.mcp_internal, "--mcp-internal-port").await?;
        let agent_listener =
            bind("notes-agent", spec.agent_internal, "--agent-internal-port").await?;
        let mcp_internal = mcp_listener.local_addr()?;
        let agent_internal = agent_listener.local_addr()?;
        let (mut outer, outer_stop) = Stage::new();
        let (mut inner, inner_stop) = Stage::new();

        let model_upstream = match spec.model {
            ModelUpstream::Url(url) => url,
            ModelUpstream::Recorded => {
                let server = ReplayServer::buy_milk_model()
                    .context("reading the built-in buy-milk trace")?;
                let listener = bind(
                    "the recorded model",
                    SocketAddr::from(([127, 0, 0, 1], 0)),
                    "",
                )
                .await?;
                let url = format!("http://{}", listener.local_addr()?);
                let shutdown = inner_stop.shutdown();
                inner.tasks.push(tokio::spawn(async move {
                    if let Err(error) = Arc::new(server).serve(listener, shutdown).await {
                        tracing::warn!(%error, "the recorded model stopped");
                    }
                }));
                url
            }
        };
        let route = |role: &str, name: &str, listen: SocketAddr, upstream: &str| {
            Route::new(role, name, &listen.to_string(), upstream).map_err(anyhow::Error::msg)
        };
        let agent_route = route(
            "agent",
            "agent",
            spec.agent,
            &format!("http://{agent_internal}"),
        )?;
        let inner_routes = vec![
            route("mcp", "notes", spec.mcp, &format!("http://{mcp_internal}"))?,
            route("model", "model", spec.model_listen, &model_upstream)?,
        ];
        let settings = ProxySettings {
            redact: spec.redact,
            live: spec.live.clone(),
            steer: spec.steer.clone(),
            ..ProxySettings::default()
        };
        let outer_proxy = Proxy::bind(vec![agent_route], settings.clone())
            .await
            .map_err(port_flag)?;
        let inner_proxy = Proxy::bind(inner_routes, settings)
            .await
            .map_err(port_flag)?;
        let routes: Vec<Route> = outer_proxy
            .routes()
            .into_iter()
            .chain(inner_proxy.routes())
            .collect();

        let server = NotesServer::open(NotesServerConfig::new(&spec.notes_file))
            .await
            .with_context(|| format!("opening the notes file {}", spec.notes_file.display()))?;
        let shutdown = inner_stop.shutdown();
        inner.tasks.push(tokio::spawn(async move {
            if let Err(error) =
                tracer_reference::notes_server::serve_http(mcp_listener, server, shutdown).await
            {
                tracing::warn!(%error, "notes-server stopped");
            }
        }));

        let mut agent_config =
            AgentConfig::new(ModelApi::Ollama, format!("http://{}", routes[2].listen));
        agent_config.model = spec.model_name.clone();
        agent_config.mcp_servers = vec![McpServerSpec::Http {
            url: format!("http://{}/mcp", routes[1].listen),
        }];
        let agent_host = Arc::new(
            tracer_reference::agent::Agent::new(&agent_config)
                .context("configuring notes-agent")?,
        );
        let shutdown = outer_stop.shutdown();
        outer.tasks.push(tokio::spawn(async move {
            if let Err(error) =
                tracer_reference::agent::serve_until(agent_listener, agent_host, shutdown).await
            {
                tracing::warn!(%error, "notes-agent stopped");
            }
        }));

        let recording =
            Recording::start(store, spec.run_id.clone())?.beside(grouping(GROUPING_INTERVAL));
        let outer_run = outer_proxy.run(recording.recorder(), outer_stop.shutdown());
        outer.tasks.push(tokio::spawn(async move {
            outer_run.await;
        }));
        let inner_run = inner_proxy.run(recording.recorder(), inner_stop.shutdown());
        inner.tasks.push(tokio::spawn(async move {
            inner_run.await;
        }));
        Ok(Topology {
            routes,
            model_upstream,
            outer,
            inner,
            recording,
        })
    }

    /// Writes the routes to the database while the topology runs (`tracer up`: `tracer rerun`
    /// finds the live agent route), marked retired when it stops.
    pub fn announce_routes(&mut self) {
        self.recording.add(announcing(self.routes.clone()));
    }

    /// The address a user sends `POST /agent` to.
    pub fn agent_url(&self) -> String {
        format!("http://{}/agent", self.routes[0].listen)
    }

    /// Stops every part, waits for in-flight hops, writes them and groups them.
    pub async fn stop(self) -> anyhow::Result<WriterReport> {
        self.stop_at(Shutdown::never()).await
    }

    /// Runs until `shutdown` asks, then stops (a second request cuts the grace short).
    pub async fn run_until(self, shutdown: Shutdown) -> anyhow::Result<WriterReport> {
        let (requested, cut_short) = shutdown.into_parts();
        requested.await;
        self.stop_at(Shutdown::new(cut_short)).await
    }

    /// The user-facing half first (requests in flight finish through the rest), then the rest;
    /// `cut_short` ends the waiting.
    async fn stop_at(mut self, cut_short: Shutdown) -> anyhow::Result<WriterReport> {
        let (now, _) = cut_short.into_parts();
        let grace = ProxySettings::default().shutdown_grace + Duration::from_secs(1);
        let stages = async {
            self.outer.stop(StopLevel::Graceful, grace).await;
            self.inner.stop(StopLevel::Graceful, grace).await;
        };
        tokio::select! {
            () = stages => {}
            () = now => {
                self.outer.stop(StopLevel::Now, Duration::from_secs(2)).await;
                self.inner.stop(StopLevel::Now, Duration::from_secs(2)).await;
            }
        }
        let finished = self.recording.finish(Finish::until_drained()).await;
        let report = finished.writer.context("flushing the record")?;
        if let Some(failed) = finished.failed.into_iter().next() {
            return Err(failed.error.into());
        }
        Ok(report)
    }
}

/// Binds one of the parts' own listeners; a port in use names `flag`, which moves it.
async fn bind(who: &str, addr: SocketAddr, flag: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|error| {
        let in_use = error.kind() == std::io::ErrorKind::AddrInUse;
        match in_use && !flag.is_empty() {
            true => anyhow::anyhow!(
                "{who} cannot listen on {addr}: the port is in use ({error}); another program \
                 (or another tracer) has it: give {flag} another port"
            ),
            false => anyhow::anyhow!("{who} cannot listen on {addr}: {error}"),
        }
    })
}

/// A route of `tracer up` whose port is in use names the flag that moves it.
fn port_flag(error: anyhow::Error) -> anyhow::Error {
    match error.downcast::<ListenError>() {
        Ok(listen) => {
            let flag = match listen.route.as_deref() {
                Some("agent") => "--agent-port",
                Some("notes") => "--mcp-port",
                _ => "--model-port",
            };
            anyhow::Error::new(listen.moved_by(&format!("give {flag} another port")))
        }
        Err(other) => other,
    }
}
