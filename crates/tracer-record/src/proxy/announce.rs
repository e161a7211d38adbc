//! Writing the routes a proxy serves to the database when it starts (and marking them retired
//! when it stops), so `tracer rerun` can find the live agent route that recorded a trace.

use super::Route;
use crate::recording::Beside;
use tracer_store::Store;
use tracer_store::proxy_routes::RouteAnnouncement;

/// Announces `routes`; a failure is logged, never fatal (recording matters more).
pub async fn announce_routes(store: &Store, routes: &[Route]) -> Vec<i64> {
    let rows: Vec<RouteAnnouncement> = routes
        .iter()
        .map(|r| RouteAnnouncement {
            name: r.name.clone(),
            role: r.role.to_string(),
            listen: r.listen.to_string(),
            upstream: r.shown_upstream(),
        })
        .collect();
    match store.announce_routes(&rows).await {
        Ok(seqs) => seqs,
        Err(error) => {
            tracing::warn!(%error, "could not write the served routes to the database");
            Vec::new()
        }
    }
}

/// Announces `routes` beside a recording (in a task of its own, so a proxy starting up does not
/// wait on the database: a stop signal must find its listener installed as early as before),
/// and marks them as no longer served when the recording finishes.
pub fn announcing(routes: Vec<Route>) -> Beside {
    Beside::until_stopped(move |store, stop| async move {
        let seqs = announce_routes(&store, &routes).await;
        stop.await;
        retire_routes(&store, &seqs).await;
    })
}

/// Marks announced routes as no longer served.
async fn retire_routes(store: &Store, seqs: &[i64]) {
    if let Err(error) = store.retire_routes(seqs).await {
        tracing::warn!(%error, "could not mark the served routes as stopped");
    }
}
