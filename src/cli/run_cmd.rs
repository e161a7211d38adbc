//! `tracer run [OPTIONS] -- COMMAND [ARGS…]`: the forward proxy on a free loopback port, COMMAND
//! run with the proxy and trust variables set (and a known agent's stdio MCP servers behind
//! `tracer wrap`), one line before, the run's traces after, and the child's exit code.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio::sync::oneshot;

use super::keep_while_recording::start_recording;
use super::otlp_args::OtlpArgs;
use super::run_fork::{RunFork, keep_command};
use super::run_report::{Report, ReportStyle};
use super::telemetry_beside::{Keeping, TelemetryBeside};
use super::ui_beside::{UiBeside, tap_of};
use super::{Redaction, parse_route};
use crate::run::agent_telemetry::turn_on;
use crate::run::agents::{AgentContext, KnownAgent, Override, WrapCommand, prepare};
use crate::run::hosts::{KNOWN_MODEL_HOSTS, hosts_in_env_and_args, url_host};
use crate::run::{Scratch, child, env};
use tracer_record::ca::{CertAuthority, Created, ca_dir};
use tracer_record::proxy::forward_roles::{HostPattern, HostRole};
use tracer_record::proxy::tls::{HostPin, UpstreamTls};
use tracer_record::proxy::{ForwardLimits, ForwardSettings, Proxy, ProxySettings, Route};
use tracer_record::recording::Finish;
use tracer_serve::Shutdown;
use tracer_serve::stop_signal::StopSignals;
use tracer_store::Store;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Print each of the run's traces in full (as `tracer show` does) when the command ends
    #[arg(long, conflicts_with_all = ["quiet", "json"])]
    pub show: bool,
    /// Print nothing after the command ends (the first line still says where it records)
    #[arg(long, short = 'q', conflicts_with = "json")]
    pub quiet: bool,
    /// Print the run (exit code, traces, tunnelled hosts) as one JSON line on stderr at the end
    #[arg(long)]
    pub json: bool,

    /// Decrypt only these hosts (`'*'`: every host); default: the known model APIs and the
    /// hosts of the base URLs and MCP URLs in the command's environment, arguments and agent
    /// configuration. Other hosts are tunnelled and recorded as one tunnel row each
    #[arg(long, value_name = "PATTERN,...", value_delimiter = ',')]
    pub intercept: Vec<HostPattern>,
    /// The role (and route name) of a host's hops, instead of telling by the request
    /// (repeatable; HOST may be `*.domain`)
    #[arg(long, value_name = "HOST=ROLE[:NAME]")]
    pub host_role: Vec<HostRole>,
    /// Also a reverse route, as for `tracer proxy` (for runtimes that send loopback traffic
    /// past the proxy: point the program's base URL at LISTEN; repeatable)
    #[arg(long = "route", value_name = "ROLE[:NAME]=LISTEN=UPSTREAM", value_parser = parse_route)]
    pub routes: Vec<Route>,
    /// Bytes of each body kept in the record (the rest is forwarded and counted)
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_body: usize,
    /// A PEM file of CA certificates to trust for upstreams, beside the system's roots
    /// (repeatable)
    #[arg(long = "upstream-ca", value_name = "FILE")]
    pub upstream_cas: Vec<PathBuf>,
    /// Connect to ADDR:PORT when the program asks for HOST:PORT; TLS and Host still say HOST
    /// (repeatable, like curl's --resolve)
    #[arg(long, value_name = "HOST:PORT=ADDR:PORT")]
    pub resolve: Vec<HostPin>,
    /// The CA's directory (as for `tracer ca`)
    #[arg(long, value_name = "DIR")]
    pub ca_dir: Option<PathBuf>,
    #[command(flatten)]
    pub redaction: Redaction,
    #[command(flatten)]
    pub otlp: OtlpArgs,
    #[command(flatten)]
    pub ui: super::ui_beside::UiFlag,
    /// Leave the agent's own telemetry as it is: by default a run turns Claude Code's, Codex's
    /// and Gemini CLI's OpenTelemetry on, pointed at tracer (and passed on to your own endpoint)
    #[arg(long)]
    pub no_agent_telemetry: bool,

    /// The program to run and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    /// Set by `tracer fork`: the run is a fork's (never on the command line).
    #[arg(skip)]
    pub fork: Option<RunFork>,
}

pub async fn run(db: &Path, args: RunArgs) -> anyhow::Result<ExitCode> {
    let started = tracer_wire::hop::now_unix_ns();
    // Heard from before anything starts: a signal never finds the default action.
    let mut signals = StopSignals::listen();
    let Some((program, program_args)) = args.command.split_first() else {
        anyhow::bail!("no command: use tracer run -- COMMAND [ARGS...]");
    };
    let here = std::env::current_dir().context("the working directory")?;
    let db = here.join(db);
    // A fork runs the command in its own folder (a sandbox's copy, or the recorded one).
    let cwd = args
        .fork
        .as_ref()
        .map_or_else(|| here.clone(), |f| f.cwd.clone());
    let otlp = args.otlp.config()?;
    let store = Store::open(&db).await?;
    let ca_home = ca_dir(args.ca_dir.as_deref())?;
    let (ca, created) = CertAuthority::load_or_create(&ca_home)?;
    if created == Created::New {
        tracer_serve::say!(
            "tracer: created a CA in {} for this run and later ones",
            ca_home.display()
        );
    }
    let bundle = ca.write_bundle()?;
    let scratch = Scratch::create().context("tracer's scratch directory for the run")?;
    let inherited: HashMap<String, String> = std::env::vars().collect();
    // Every hop of this run, the proxy's and the wrapped servers', carries it.
    let run_id = (args.fork.as_ref())
        .map_or_else(|| tracer_wire::ids::random_hex_id(8), |f| f.run_id.clone());
    keep_command(
        &store,
        &run_id,
        &args.command,
        args.fork.as_ref(),
        &cwd,
        started,
    )
    .await?;
    let wrap = WrapCommand {
        tracer: std::env::current_exe().context("tracer's own path")?,
        db: db.clone(),
        redact: args.redaction.redact(),
        max_body: args.max_body,
        run_id: Some(run_id.clone()),
    };
    let agent = KnownAgent::recognise(program);
    let coverage = agent.map(|agent| {
        let context = AgentContext {
            home: inherited
                .get("HOME")
                .map_or_else(|| cwd.clone(), PathBuf::from),
            cwd: cwd.clone(),
            env: &inherited,
            wrap: &wrap,
            scratch: scratch.path(),
        };
        (agent, prepare(agent, program_args, &context))
    });
    let (child_args, agent_env, config_urls) = match &coverage {
        Some((_, Ok(plan))) => (plan.args.clone(), plan.env.clone(), plan.urls.clone()),
        _ => (program_args.to_vec(), Vec::new(), Vec::new()),
    };
    let found = found_hosts(&inherited, &child_args, &config_urls);
    let intercept = if args.intercept.is_empty() {
        let mut patterns: Vec<HostPattern> = KNOWN_MODEL_HOSTS
            .iter()
            .chain(found.iter().map(String::as_str).collect::<Vec<_>>().iter())
            .filter_map(|host| host.parse().ok())
            .collect();
        let mut seen = BTreeSet::new();
        patterns.retain(|p| seen.insert(p.to_string()));
        patterns
    } else {
        args.intercept.clone()
    };

    let ui = UiBeside::start(&args.ui, &store).await?;
    let telemetry = if args.no_agent_telemetry {
        None
    } else {
        let keeping = Keeping {
            redact: args.redaction.redact(),
            max_body: args.max_body,
            run_id: Some(run_id.clone()),
        };
        let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        Some(TelemetryBeside::start(loopback, &store, keeping).await?)
    };
    let telemetry_on = (telemetry.as_ref())
        .zip(agent)
        .and_then(|(t, agent)| turn_on(agent, t.endpoint()).map(|on| (agent, on)));
    let child_args: Vec<String> = match &telemetry_on {
        Some((_, on)) => on.args.iter().cloned().chain(child_args).collect(),
        None => child_args,
    };
    let settings = ProxySettings {
        steer: args.fork.as_ref().map(|f| Arc::clone(&f.steer)),
        live: tap_of(ui.as_ref()),
        max_body: args.max_body,
        redact: args.redaction.redact(),
        upstream_tls: UpstreamTls {
            extra_cas: args.upstream_cas.clone(),
            resolve: args.resolve.clone(),
        },
        ..ProxySettings::default()
    };
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let proxy = Proxy::bind(args.routes.clone(), settings)
        .await?
        .with_forward(ForwardSettings {
            listen: loopback,
            intercept: intercept.clone(),
            host_roles: args.host_role.clone(),
            ca: Arc::new(ca),
            limits: ForwardLimits::default(),
            // The run's id is the boundary here.
            identify_clients: false,
        })
        .await?;
    let forward = proxy
        .forward_addr()
        .context("the forward proxy did not listen")?;
    let mut child_env: Vec<(String, String)> = env::child_env(forward, &bundle)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    child_env.extend(agent_env);
    if let Some(telemetry) = &telemetry {
        child_env.push((
            "TRACER_OTLP_ENDPOINT".into(),
            telemetry.endpoint().to_string(),
        ));
    }
    if let Some((_, on)) = &telemetry_on {
        child_env.extend(on.env.iter().cloned());
    }
    child_env.push(("TRACER_DB".into(), db.display().to_string()));

    tracer_serve::say!(
        "{}",
        first_line(&db, program, &intercept, &coverage, &proxy.routes())
            + &crate::run::agent_telemetry::first_line_words(
                &telemetry_on,
                args.no_agent_telemetry
            )
    );
    if let Some(ui) = &ui {
        ui.say();
    }

    let exporter = tracer_export::exporter::start_configured(otlp, &store, false);
    let recording = start_recording(&store, Some(run_id.clone()))?;
    let (stop_proxy, proxy_stop_asked) = oneshot::channel::<()>();
    let (cut_short, cut_short_asked) = oneshot::channel::<()>();
    let shutdown = Shutdown::new(async move {
        let _ = proxy_stop_asked.await;
    })
    .cut_short_by(async move {
        if cut_short_asked.await.is_err() {
            std::future::pending::<()>().await;
        }
    });
    let proxy_task = tokio::spawn(proxy.run(recording.recorder(), shutdown));

    let status = match child::spawn(program, &child_args, &child_env, &cwd) {
        Ok(mut running) => Some(child::wait_passing_signals(&mut running, &mut signals).await),
        Err(error) => {
            tracer_serve::say!("tracer run: cannot start `{program}`: {error}");
            None
        }
    };
    let code = match &status {
        Some(Ok(status)) => child::exit_code(*status),
        Some(Err(_)) => 1,
        None => 127,
    };
    let ended = tracer_wire::hop::now_unix_ns();
    // The child is gone: in-flight hops finish within the grace period; a signal now cuts it.
    let _ = stop_proxy.send(());
    tokio::spawn(async move {
        let (_, name) = signals.next().await;
        tracer_serve::say!("tracer run: {name}: not waiting for in-flight hops");
        let _ = cut_short.send(());
    });
    let _ = proxy_task.await;
    // The wrapped servers write their own hops as they exit after the agent.
    let others = if matches!(&coverage, Some((_, Ok(plan))) if !plan.wrapped.is_empty()) {
        Duration::from_millis(500)
    } else {
        Duration::ZERO
    };
    let finished = recording
        .finish(Finish::until_drained().then_settle(others))
        .await;
    finished.writer.context("waiting for the store writer")?;
    for failed in &finished.failed {
        tracer_serve::say!("tracer: {failed}");
    }
    if let Some(exporter) = exporter {
        let done = exporter.finish(tracer_export::exporter::FINISH_GRACE).await;
        tracer_serve::say!("tracer: {}", done.line());
    }
    // The agent has exited: what it flushed as it went is in.
    if let Some(telemetry) = telemetry {
        let (line, received) = telemetry.finish().await;
        // Said when the agent's telemetry was turned on or anything arrived.
        if !args.quiet && (telemetry_on.is_some() || received > 0) {
            tracer_serve::say!("{line}");
        }
    }
    let style = if args.fork.is_some() {
        // `tracer fork` says what the fork did.
        ReportStyle::Quiet
    } else if args.json {
        ReportStyle::Json
    } else if args.show {
        ReportStyle::Full
    } else if args.quiet {
        ReportStyle::Quiet
    } else {
        ReportStyle::Table
    };
    let wrapped = match &coverage {
        Some((_, Ok(plan))) => plan.wrapped.clone(),
        _ => Vec::new(),
    };
    Report {
        db: &db,
        program,
        run_id: &run_id,
        exit_code: code,
        started,
        ended,
        wrapped,
    }
    .print(&store, style)
    .await?;
    if let Some(ui) = ui {
        ui.finish().await;
    }
    store.close().await;
    drop(scratch);
    Ok(ExitCode::from(code))
}

/// Hosts named by the environment's endpoint variables, the arguments and the agent's config.
fn found_hosts(
    env: &HashMap<String, String>,
    args: &[String],
    config_urls: &[String],
) -> BTreeSet<String> {
    let mut hosts = hosts_in_env_and_args(env.iter().map(|(k, v)| (k.as_str(), v.as_str())), args);
    hosts.extend(config_urls.iter().filter_map(|url| url_host(url)));
    hosts
}

/// The one line before the run: where it records, how to watch, what is decrypted, and whether
/// the stdio MCP servers are recorded.
fn first_line(
    db: &Path,
    program: &str,
    intercept: &[HostPattern],
    coverage: &Option<(KnownAgent, Result<Override, crate::run::agents::AgentError>)>,
    routes: &[Route],
) -> String {
    let shown_db = tracer_wire::safe_text::one_line(&db.display().to_string()).into_owned();
    let known: Vec<String> = KNOWN_MODEL_HOSTS.iter().map(|h| h.to_string()).collect();
    let decrypting = if intercept.iter().any(|p| p.to_string() == "*") {
        "every host".to_string()
    } else {
        let listed: Vec<String> = intercept.iter().map(ToString::to_string).collect();
        let others: Vec<&String> = listed.iter().filter(|h| !known.contains(h)).collect();
        if listed.iter().filter(|h| known.contains(h)).count() == known.len() {
            let mut parts: Vec<String> = others.iter().map(|h| h.to_string()).collect();
            parts.push(format!(
                "the {} known model APIs ({}, {}, {}, …: docs/agents.md)",
                known.len(),
                known[0],
                known[1],
                known[3]
            ));
            parts.join(", ")
        } else {
            listed.join(", ")
        }
    };
    let stdio = match coverage {
        Some((agent, Ok(plan))) if plan.wrapped.is_empty() && plan.skipped.is_empty() => {
            format!("{}: no stdio MCP servers configured", agent.name())
        }
        Some((agent, Ok(plan))) => format!(
            "{}'s stdio MCP servers recorded through tracer wrap: {} (via {}){}",
            agent.name(),
            plan.wrapped.join(", "),
            plan.how,
            if plan.skipped.is_empty() {
                String::new()
            } else {
                format!("; NOT recorded: {}", plan.skipped.join(", "))
            }
        ),
        Some((agent, Err(why))) => {
            format!("stdio MCP servers NOT recorded ({}: {why})", agent.name())
        }
        None => format!(
            "stdio MCP servers NOT recorded (tracer does not know `{}`'s configuration)",
            Path::new(program)
                .file_name()
                .map_or_else(|| program.into(), |n| n.to_string_lossy())
        ),
    };
    let routes = routes
        .iter()
        .map(|r| {
            format!(
                "; route {} on {} → {}",
                r.name,
                r.listen,
                r.shown_upstream()
            )
        })
        .collect::<String>();
    let others = if decrypting == "every host" {
        ""
    } else {
        "; other hosts tunnelled"
    };
    tracer_wire::safe_text::one_line(&format!(
        "tracer run: recording to {shown_db} (live: tracer tui --db {shown_db}); {stdio}; \
         decrypting {decrypting}{others}{routes}"
    ))
    .into_owned()
}
