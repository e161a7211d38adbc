//! A fork of a trace whose host is still running behind an agent route that no proxy serves now
//! (`tracer proxy --route agent=…` stopped, the agent left running): a fork-mode proxy takes the
//! recorded routes' addresses, so the agent talks to it as it did, and the user's request is sent
//! again to the agent route.

use std::sync::Arc;
use std::time::Duration;

use super::plan::{ForkPlan, Target};
use super::reference::Driven;
use crate::compare::rerun_agent::process_alive;
use crate::compare::send::post_json;
use tracer_live::load::LoadedTrace;
use tracer_record::proxy::steer::Steer;
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_record::recording::{Finish, Recording};
use tracer_store::Store;
use tracer_store::proxy_routes::ServedRoute;
use tracer_wire::hop::Role;
use tracer_wire::trace_context::TraceParent;

/// Why the routes cannot be taken.
#[derive(Debug, thiserror::Error)]
pub enum RoutesError {
    #[error(
        "the proxy that recorded trace {trace} (pid {pid}) still serves {listen}: stop it, then run \
         tracer fork again (the fork takes its addresses, so the agent talks to the fork)"
    )]
    StillServed {
        trace: String,
        pid: i64,
        listen: String,
    },
}

/// The routes a trace's hops came through, as the proxy that served them announced them (the
/// newest announcement of each name), when every one of them was announced.
pub async fn recorded_routes(
    store: &Store,
    trace: &LoadedTrace,
) -> anyhow::Result<Option<Vec<ServedRoute>>> {
    let mut names: Vec<&str> = trace.hops.iter().map(|h| h.start.route.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        match store.routes_named(name).await?.into_iter().next() {
            Some(route) => out.push(route),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// True when something accepts connections at the agent hop's upstream: the host still runs.
pub async fn agent_is_up(trace: &LoadedTrace) -> bool {
    let Some(hop) = trace.hops.iter().find(|h| h.start.role == Role::Agent) else {
        return false;
    };
    let Ok(uri) = hop.start.url.parse::<http::Uri>() else {
        return false;
    };
    let Some(host) = uri.host() else {
        return false;
    };
    let port = uri.port_u16().unwrap_or(80);
    let connect = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port));
    matches!(
        tokio::time::timeout(Duration::from_secs(2), connect).await,
        Ok(Ok(_))
    )
}

/// The announcement of a route a live proxy still serves, if one does.
pub fn still_served(served: &[ServedRoute]) -> Option<&ServedRoute> {
    served
        .iter()
        .find(|r| r.stopped_unix_ns.is_none() && process_alive(r.pid))
}

/// Serves the recorded routes in fork mode, sends the user's request (edited when N is it) to
/// the agent route, and stops once it is answered and recorded.
pub async fn drive(
    store: &Store,
    plan: &ForkPlan,
    steer: Arc<dyn Steer>,
    served: &[ServedRoute],
    run_id: &str,
    timeout: Duration,
) -> anyhow::Result<Driven> {
    if let Some(busy) = still_served(served) {
        return Err(RoutesError::StillServed {
            trace: plan.original.clone(),
            pid: busy.pid,
            listen: busy.listen.clone(),
        }
        .into());
    }
    let entry = plan
        .entry
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the user's request was not recorded whole"))?;
    let routes = served
        .iter()
        .map(|r| Route::new(&r.role, &r.name, &r.listen, &r.upstream).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<Vec<Route>>>()?;
    let agent = (routes.iter())
        .find(|r| r.name == entry.route)
        .map(|r| r.listen)
        .ok_or_else(|| anyhow::anyhow!("the agent route {} was not announced", entry.route))?;
    let settings = ProxySettings {
        steer: Some(steer),
        ..ProxySettings::default()
    };
    let proxy = Proxy::bind(routes, settings).await?;
    let recording = Recording::start(store.clone(), Some(run_id.to_string()))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(
        recording.recorder(),
        tracer_serve::Shutdown::new(async move {
            let _ = stopped.await;
        }),
    ));
    let body = match (&plan.target, &plan.edited_body) {
        (Target::Entry, Some(edited)) => edited.clone(),
        _ => entry.body.clone(),
    };
    let parent = TraceParent::new_root();
    let url = format!("http://{agent}{}", entry.path);
    let answer = post_json(&url, body, Some(&parent), timeout).await;
    let _ = stop.send(());
    let _ = run.await;
    recording.finish(Finish::until_drained()).await.writer?;
    Ok(Driven::of(&parent, answer))
}
