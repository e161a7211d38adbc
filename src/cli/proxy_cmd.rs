//! `tracer proxy`: open the store, bind the routes, print the route table, serve until Ctrl-C,
//! grouping recorded hops into traces as they arrive (the proxy itself never sees the store).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

use super::ProxyArgs;
use super::keep_while_recording::start_recording;
use super::stdout_text::{out, outln};
use super::telemetry_beside::{Keeping, TelemetryBeside};
use super::ui_beside::{UiBeside, tap_of};
use tracer_export::exporter::start_configured as start_exporter;
use tracer_record::ca::{CertAuthority, Created, ca_dir};
use tracer_record::proxy::announce::announcing;
use tracer_record::proxy::forward_roles::HostPattern;
use tracer_record::proxy::tls::UpstreamTls;
use tracer_record::proxy::{ForwardLimits, ForwardSettings, default_max_connections};
use tracer_record::proxy::{Proxy, ProxySettings, Route, check_routes, routes_from_file};
use tracer_record::recording::Finish;
use tracer_serve::stop_signal::shutdown_on_signals;
use tracer_store::Store;

pub async fn run(db: &Path, args: ProxyArgs) -> anyhow::Result<ExitCode> {
    let mut routes = args.routes;
    if let Some(config) = &args.config {
        routes.extend(routes_from_file(config)?);
    }
    if let Err(message) = check_routes(&routes)
        && !(routes.is_empty() && args.forward.is_some())
    {
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
    let mut settings = ProxySettings {
        max_body: args.max_body,
        upstream_timeout,
        redact: args.redaction.redact(),
        upstream_tls: UpstreamTls {
            extra_cas: args.upstream_cas,
            resolve: args.resolve,
        },
        ..ProxySettings::default()
    };
    // Heard from before anything listens: a signal never finds the default action.
    let shutdown = shutdown_on_signals("tracer");
    let otlp = args.otlp.config()?;
    let store = Store::open(db).await?;
    let ui = UiBeside::start(&args.ui, &store).await?;
    settings.live = tap_of(ui.as_ref());
    let keeping = Keeping {
        redact: settings.redact,
        max_body: settings.max_body,
        run_id: None,
    };
    let telemetry = TelemetryBeside::start_if(&args.otlp_listen, &store, keeping).await?;
    let intercept = args.intercept;
    let mut proxy = Proxy::bind(routes, settings).await?;
    if let Some(listen) = args.forward {
        let handshake_timeout = Duration::try_from_secs_f64(args.handshake_timeout)
            .ok()
            .filter(|timeout| !timeout.is_zero())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--handshake-timeout must be a positive number of seconds, not {}",
                    args.handshake_timeout
                )
            })?;
        let limits = ForwardLimits {
            handshake_timeout,
            max_connections: args
                .forward_max_connections
                .map_or_else(default_max_connections, |n| n as usize),
        };
        let ca_dir = ca_dir(args.ca_dir.as_deref())?;
        let (ca, created) = CertAuthority::load_or_create(&ca_dir)?;
        if created == Created::New {
            tracer_serve::say!(
                "tracer: created a CA in {}: clients must trust it (`tracer ca --env`)",
                ca_dir.display()
            );
        }
        proxy = proxy
            .with_forward(ForwardSettings {
                listen,
                intercept: intercept.clone(),
                host_roles: args.host_role,
                ca: std::sync::Arc::new(ca),
                limits,
                identify_clients: true,
            })
            .await?;
    }
    warn_open_listeners(&proxy.routes(), proxy.forward_addr());
    print_route_table(&proxy.routes(), proxy.forward_addr(), &intercept, db)?;
    // Said once every route listens: what the page shows can be recorded.
    if let Some(ui) = &ui {
        ui.say();
    }
    if let Some(telemetry) = &telemetry {
        tracer_serve::say!("{}", telemetry.line());
    }
    let mut recording = start_recording(&store, None)?;
    recording.add(announcing(proxy.routes()));
    let exporter = start_exporter(otlp, &store, false);

    let stats = proxy.run(recording.recorder(), shutdown).await;
    // Every hop written, the last ones are grouped (unless the database refuses writes: the
    // hops left in the journal are grouped by the next run).
    let finished = recording.finish(Finish::until_drained()).await;
    let report = finished.writer.context("waiting for the store writer")?;
    for failed in &finished.failed {
        tracer_serve::say!("tracer: {failed}");
    }
    if let Some(exporter) = exporter {
        let report = exporter.finish(tracer_export::exporter::FINISH_GRACE).await;
        tracer_serve::say!("tracer: {}", report.line());
    }
    if let Some(ui) = ui {
        ui.finish().await;
    }
    if let Some(telemetry) = telemetry {
        tracer_serve::say!("{}", telemetry.finish().await.0);
    }
    store.close().await;
    tracer_serve::say!(
        "tracer: stopped after {}; {}{}",
        tracer_trace::words::plural(stats.connections as usize, "connection"),
        report.summary(),
        if stats.cut_off > 0 {
            format!(
                ", {} cut off after the grace period",
                tracer_trace::words::plural(stats.cut_off as usize, "connection")
            )
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// One warning line on stderr for each listener other machines can reach: none of them asks
/// who is calling.
fn warn_open_listeners(routes: &[Route], forward: Option<std::net::SocketAddr>) {
    use tracer_serve::reachable_from_elsewhere as open;
    for route in routes.iter().filter(|route| open(route.listen)) {
        tracer_serve::say!(
            "tracer: warning: route `{}` listens on {}, not a loopback address: anyone who can \
             reach it can send through it to {} unauthenticated, and it records what they send",
            route.name,
            route.listen,
            route.shown_upstream()
        );
    }
    if let Some(addr) = forward.filter(|addr| open(*addr)) {
        tracer_serve::say!(
            "tracer: warning: the forward proxy listens on {addr}, not a loopback address: it is \
             an open proxy to any host for anyone who can reach it, unauthenticated"
        );
    }
}

/// The table printed at start: what listens where, and where it forwards.
pub fn route_table(routes: &[Route]) -> String {
    table_of(routes, None)
}

/// The route table, with the forward proxy's row (listen address, what it intercepts) last.
fn table_of(routes: &[Route], forward: Option<[String; 4]>) -> String {
    let mut rows: Vec<[String; 4]> = routes
        .iter()
        .map(|r| {
            [
                r.name.clone(),
                r.role.to_string(),
                r.listen.to_string(),
                r.shown_upstream(),
            ]
        })
        .collect();
    rows.extend(forward);
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

fn print_route_table(
    routes: &[Route],
    forward: Option<std::net::SocketAddr>,
    intercept: &[HostPattern],
    db: &Path,
) -> std::io::Result<()> {
    outln!("tracer proxy: recording to {}", db.display())?;
    let forward_row = forward.map(|addr| {
        let hosts = if intercept.is_empty() {
            "every host".to_string()
        } else {
            intercept
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        [
            "forward".to_string(),
            "by host".to_string(),
            addr.to_string(),
            format!("HTTPS_PROXY=http://{addr} (decrypts: {hosts})"),
        ]
    });
    out!("{}", table_of(routes, forward_row))?;
    outln!("Ctrl-C to stop.")
}
