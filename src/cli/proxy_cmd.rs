//! `tracer proxy`: open the store, bind the routes, print the route table, serve until Ctrl-C,
//! grouping recorded hops into traces as they arrive (the proxy itself never sees the store).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::sync::oneshot;

use super::ProxyArgs;
use super::correlate_cmd::group_new_hops;
use crate::proxy::{Proxy, ProxySettings, Route, check_routes, routes_from_file};
use crate::stop_signal::stop_requested;
use crate::store::{Recorder, Store};
use crate::trace::correlate::group_until;

/// How often new hops are grouped into traces while the proxy runs.
pub const GROUPING_PERIOD: Duration = Duration::from_millis(250);

pub async fn run(db: &Path, args: ProxyArgs) -> anyhow::Result<ExitCode> {
    let mut routes = args.routes;
    if let Some(config) = &args.config {
        routes.extend(routes_from_file(config)?);
    }
    if let Err(message) = check_routes(&routes) {
        bail!(message);
    }
    let upstream_timeout = Duration::try_from_secs_f64(args.upstream_timeout)
        .ok()
        .filter(|timeout| !timeout.is_zero())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--upstream-timeout must be a positive number of seconds, not {}",
                args.upstream_timeout
            )
        })?;
    let settings = ProxySettings {
        max_body: args.max_body,
        upstream_timeout,
        redact: !args.no_redact,
        ..ProxySettings::default()
    };
    let store = Store::open(db).await?;
    let proxy = Proxy::bind(routes, settings).await?;
    print_route_table(&proxy.routes(), db);

    let (recorder, writer) = Recorder::spawn(store.clone())?;
    let (stop_grouping, grouping_stopped) = oneshot::channel();
    let grouping = tokio::spawn(group_until(store.clone(), GROUPING_PERIOD, async move {
        let _ = grouping_stopped.await;
    }));
    let stats = proxy.run(recorder, stop_requested("tracer")).await;
    let report = writer.await.context("waiting for the store writer")?;
    let _ = stop_grouping.send(());
    let _ = grouping.await;
    // Every hop is written now: group the last ones (unless the database refuses writes: the
    // hops left in the journal are grouped by the next run).
    if report.journal_left.is_none()
        && let Err(error) = group_new_hops(&store).await
    {
        eprintln!("tracer: grouping the last hops into traces: {error:#}");
    }
    store.close().await;
    eprintln!(
        "tracer: stopped after {} connections; {}{}",
        stats.connections,
        report.summary(),
        if stats.cut_off > 0 {
            format!(
                ", {} connections cut off after the grace period",
                stats.cut_off
            )
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// The table printed at start: what listens where, and where it forwards.
pub fn route_table(routes: &[Route]) -> String {
    let rows: Vec<[String; 4]> = routes
        .iter()
        .map(|r| {
            [
                r.name.clone(),
                r.role.to_string(),
                r.listen.to_string(),
                r.upstream.to_string(),
            ]
        })
        .collect();
    let header = ["ROUTE", "ROLE", "LISTEN", "UPSTREAM"].map(String::from);
    let widths: Vec<usize> = (0..4)
        .map(|i| {
            rows.iter()
                .chain([&header])
                .map(|row| row[i].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in [&header].into_iter().chain(rows.iter()) {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str("  ");
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn print_route_table(routes: &[Route], db: &Path) {
    println!("tracer proxy: recording to {}", db.display());
    print!("{}", route_table(routes));
    println!("Ctrl-C to stop.");
}
