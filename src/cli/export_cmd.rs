//! `tracer export`: one trace (or every trace, or a hop-log file) as a hop log, HAR, OTLP, Mermaid,
//! Markdown or HTML.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::ValueEnum;

use super::ExportArgs;
use super::stdout_text::{emit, emit_bytes, emit_json_text};
use crate::replay::source::is_file;
use tracer_export::body_text::{FetchBody, TraceToExport};
use tracer_export::exporter::config::{OtlpFlags, resolve};
use tracer_export::exporter::push::push;
use tracer_export::har::har_document;
use tracer_export::hop_log::{Bodies as LogBodies, HopLog};
use tracer_export::html::{IndexEntry, html_index, html_page};
use tracer_export::mermaid::{markdown_handout, mermaid};
use tracer_export::otlp::{SpanOptions, otlp_document, otlp_protobuf};
use tracer_live::correlate::group_new_hops;
use tracer_live::load::{Bodies, LoadedTrace, load_trace};
use tracer_store::Store;

/// The formats `tracer export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// tracer's JSON hop log (what `tracer import` reads)
    Json,
    /// HAR 1.2 (browser devtools, mitmproxy)
    Har,
    /// OpenTelemetry OTLP/JSON
    Otlp,
    /// A Mermaid sequenceDiagram
    Mermaid,
    /// A Markdown handout: the diagram and every message explained
    Md,
    /// A self-contained HTML page: diagram, timing waterfall, every message expandable
    Html,
}

impl ExportFormat {
    /// The file extension used for `--all` directories.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Har => "har",
            ExportFormat::Otlp => "otlp.json",
            ExportFormat::Mermaid => "mmd",
            ExportFormat::Md => "md",
            ExportFormat::Html => "html",
        }
    }

    /// Whether several traces fit in one document of this format.
    pub fn holds_many(self) -> bool {
        matches!(self, ExportFormat::Har | ExportFormat::Otlp)
    }
}

/// A trace to export: as loaded, and its hop log.
struct Exported {
    log: HopLog,
    trace: LoadedTrace,
}

impl Exported {
    /// The trace and the log of it, its entries carrying the bodies or their lengths only, the
    /// agent's own events placed in it.
    async fn of(store: &Store, trace: LoadedTrace, bodies: LogBodies) -> Exported {
        let log = HopLog::from_loaded(&trace, bodies);
        let log = super::show_agent::placed(store, &trace, log).await;
        Exported { log, trace }
    }

    fn view(&self) -> TraceToExport<'_> {
        TraceToExport {
            fetch: None,
            id: self.log.trace_id(),
            title: self.log.title(),
            hops: &self.trace.hops,
            session: self.log.session(),
            agent_events: self.log.agent_events(),
        }
    }
}

/// One document of `format` for the given traces (one trace unless the format holds many).
pub fn render(
    format: ExportFormat,
    traces: &[TraceToExport<'_>],
    log: Option<&HopLog>,
    spans: SpanOptions,
) -> String {
    let pretty = |value: serde_json::Value| {
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    };
    match format {
        ExportFormat::Json => log.map(HopLog::to_json_pretty).unwrap_or_default(),
        ExportFormat::Har => pretty(har_document(traces)),
        ExportFormat::Otlp => pretty(otlp_document(traces, spans)),
        ExportFormat::Mermaid => traces.first().map(|t| mermaid(t.hops)).unwrap_or_default(),
        ExportFormat::Md => traces.first().map(markdown_handout).unwrap_or_default(),
        ExportFormat::Html => traces.first().map(html_page).unwrap_or_default(),
    }
}

/// A trace as `format` reads it: the hop log with its bodies for json, else the hops as the store
/// gives them and a log of their lengths only (no body copied into the log).
async fn load(store: &Store, id: &str, format: ExportFormat) -> anyhow::Result<Exported> {
    let trace = load_trace(store, id, Bodies::Kept).await?;
    Ok(match format {
        ExportFormat::Json => Exported::of(store, trace, LogBodies::Kept).await,
        _ => Exported::of(store, trace, LogBodies::LengthsOnly).await,
    })
}

/// One trace's Markdown or HTML handout: its hops read with large request bodies let go of, each
/// fetched back from the store as its message is written, so one is held at a time.
async fn handout(
    store: &Store,
    id: &str,
    args: &ExportArgs,
    spans: SpanOptions,
) -> anyhow::Result<ExitCode> {
    let loaded = load_trace(store, id, Bodies::LetGo).await?;
    let trace = Exported::of(store, loaded, LogBodies::LengthsOnly).await;
    let (fetching, format) = (store.clone(), args.format);
    let text = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Handle::current();
        let fetch = |hop_id: &str| {
            let hop = runtime.block_on(fetching.hop_by_id(hop_id));
            hop.ok().map(|hop| hop.end.request_body)
        };
        let view = TraceToExport {
            fetch: Some(FetchBody(&fetch)),
            ..trace.view()
        };
        render(format, &[view], Some(&trace.log), spans)
    })
    .await?;
    write_out(args.output.as_deref(), args.format, &text)?;
    Ok(ExitCode::SUCCESS)
}

/// A document to its file as it is, or to stdout made safe for a terminal (JSON with its
/// DEL, C1 and bidi controls as `\uXXXX`, the same value; text with them as visible escapes).
fn write_out(output: Option<&Path>, format: ExportFormat, text: &str) -> anyhow::Result<()> {
    match (output, format) {
        (Some(_), _) => write_bytes(output, text.as_bytes()),
        (None, ExportFormat::Json | ExportFormat::Har | ExportFormat::Otlp) => {
            emit_json_text(text).context("writing to stdout")
        }
        (None, ExportFormat::Mermaid | ExportFormat::Md | ExportFormat::Html) => {
            emit(text).context("writing to stdout")
        }
    }
}

/// To a file, or to stdout where a reader that went away (`| head`) is not an error.
fn write_bytes(output: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
        }
        None => emit_bytes(bytes).context("writing to stdout"),
    }
}

/// Checks the OTLP-only flags against the format; the protobuf bytes must not hit a terminal.
fn check_otlp_flags(args: &ExportArgs) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let otlp_only = [
        (args.protobuf, "--protobuf"),
        (args.push.is_some(), "--push"),
        (args.push_traces_url.is_some(), "--push-traces-url"),
        (args.otlp_content, "--otlp-content"),
    ];
    if let Some((_, flag)) = otlp_only
        .iter()
        .find(|(given, _)| *given && args.format != ExportFormat::Otlp)
    {
        bail!("{flag} is for OpenTelemetry: add --format otlp");
    }
    if args.protobuf && args.output.is_none() && std::io::stdout().is_terminal() {
        bail!("--protobuf writes binary protobuf: give -o FILE or redirect stdout");
    }
    Ok(())
}

pub async fn run(db: &Path, args: ExportArgs) -> anyhow::Result<ExitCode> {
    check_otlp_flags(&args)?;
    if let Some(file) = args.id.as_deref().filter(|id| !args.all && is_file(id)) {
        return export_file(file, &args);
    }
    let store = Store::open_existing(db).await?;
    // Hops recorded since the last grouping get their trace first, as `tracer show` does.
    group_new_hops(&store).await?;
    let outcome = export(&store, &args).await;
    store.close().await;
    outcome
}

async fn export(store: &Store, args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let spans = SpanOptions {
        content: args.otlp_content,
    };
    if !args.all {
        let Some(id) = args.id.as_deref() else {
            bail!("give a trace id (or a prefix of one), or --all");
        };
        if matches!(args.format, ExportFormat::Md | ExportFormat::Html) {
            return handout(store, id, args, spans).await;
        }
        let trace = load(store, id, args.format).await?;
        if args.pushes() || args.protobuf {
            return otlp_out(store, args, &[trace.view()], spans).await;
        }
        let text = render(args.format, &[trace.view()], Some(&trace.log), spans);
        write_out(args.output.as_deref(), args.format, &text)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.id.is_some() {
        bail!("--all exports every trace; give either a trace id or --all");
    }
    let mut traces = Vec::new();
    for row in store.traces().await? {
        traces.push(load(store, &row.id, args.format).await?);
    }
    if traces.is_empty() {
        bail!("{} holds no traces yet", store.path().display());
    }
    if args.format.holds_many() {
        let views: Vec<TraceToExport<'_>> = traces.iter().map(Exported::view).collect();
        if args.pushes() || args.protobuf {
            return otlp_out(store, args, &views, spans).await;
        }
        write_out(
            args.output.as_deref(),
            args.format,
            &render(args.format, &views, None, spans),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(dir) = args.output.as_deref() else {
        bail!(
            "--all --format {} writes one file per trace: give a directory with -o DIR",
            args.format
                .to_possible_value()
                .map_or("?".to_string(), |v| v.get_name().to_string())
        );
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for trace in &traces {
        let name = file_stem(trace.log.trace_id());
        let path: PathBuf = dir.join(format!("{name}.{}", args.format.extension()));
        write_out(
            Some(&path),
            args.format,
            &render(args.format, &[trace.view()], Some(&trace.log), spans),
        )?;
    }
    let mut written = traces.len();
    if args.format == ExportFormat::Html {
        let entries: Vec<IndexEntry> = traces
            .iter()
            .map(|trace| IndexEntry {
                file: format!("{}.html", file_stem(trace.log.trace_id())),
                id: trace.log.trace_id().to_owned(),
                title: trace.log.title().map(str::to_owned),
                hops: trace.trace.hops.clone(),
            })
            .collect();
        write_out(
            Some(&dir.join("index.html")),
            args.format,
            &html_index(&entries),
        )?;
        written += 1;
    }
    tracer_serve::say!(
        "wrote {} to {}",
        tracer_trace::words::plural(written, "file"),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// A hop-log file exported as `import` then `export` would: explained again from its hops.
fn export_file(file: &str, args: &ExportArgs) -> anyhow::Result<ExitCode> {
    if args.pushes() {
        bail!("--push sends what the database holds: run tracer import {file} first");
    }
    let bytes = std::fs::read(file).with_context(|| format!("reading {file}"))?;
    let log = HopLog::from_file(&bytes).with_context(|| file.to_string())?;
    let trace = Exported {
        trace: log.loaded(),
        log,
    };
    let spans = SpanOptions {
        content: args.otlp_content,
    };
    if args.protobuf {
        write_bytes(
            args.output.as_deref(),
            &otlp_protobuf(&[trace.view()], spans),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = render(args.format, &[trace.view()], Some(&trace.log), spans);
    write_out(args.output.as_deref(), args.format, &text)?;
    Ok(ExitCode::SUCCESS)
}

/// `--protobuf` (the binary request, to a file or stdout) or `--push` (to a receiver).
async fn otlp_out(
    store: &Store,
    args: &ExportArgs,
    traces: &[TraceToExport<'_>],
    spans: SpanOptions,
) -> anyhow::Result<ExitCode> {
    if !args.pushes() {
        write_bytes(args.output.as_deref(), &otlp_protobuf(traces, spans))?;
        return Ok(ExitCode::SUCCESS);
    }
    // The same two ways as the live exporter, so a push reaches the target it recorded.
    let flags = OtlpFlags {
        base: args.push.clone(),
        traces_url: args.push_traces_url.clone(),
        headers: args.otlp_headers.clone(),
        content: spans.content,
        ..OtlpFlags::default()
    };
    let config = resolve(&flags, |name| std::env::var(name).ok())?.context("no receiver URL")?;
    let report = push(store, config, traces).await?;
    if report.not_exported > 0 {
        // One line for the failure: what happened and what to do.
        tracer_serve::say!(
            "tracer export: {}; run the same command again to send them",
            report.line()
        );
        return Ok(ExitCode::FAILURE);
    }
    tracer_serve::say!("tracer export: {}", report.line());
    Ok(ExitCode::SUCCESS)
}

/// A trace id as a file name: letters, digits, `-` and `_` kept, anything else `_`.
fn file_stem(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
