//! `tracer export`: one trace (or every trace) as a hop log, HAR, OTLP, Mermaid or Markdown.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::ValueEnum;

use super::ExportArgs;
use super::correlate_cmd::group_new_hops;
use crate::export::body_text::TraceToExport;
use crate::export::har::har_document;
use crate::export::hop_log::HopLog;
use crate::export::mermaid::{markdown_handout, mermaid};
use crate::export::otlp::otlp_document;
use crate::store::Store;
use crate::trace::RecordedHop;

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
        }
    }

    /// Whether several traces fit in one document of this format.
    pub fn holds_many(self) -> bool {
        matches!(self, ExportFormat::Har | ExportFormat::Otlp)
    }
}

/// A trace read back from the store, with its hops.
struct LoadedTrace {
    log: HopLog,
    hops: Vec<RecordedHop>,
}

impl LoadedTrace {
    fn view(&self) -> TraceToExport<'_> {
        TraceToExport {
            id: self.log.trace_id(),
            title: self.log.title(),
            hops: &self.hops,
        }
    }
}

/// One document of `format` for the given traces (one trace unless the format holds many).
pub fn render(format: ExportFormat, traces: &[TraceToExport<'_>], log: Option<&HopLog>) -> String {
    let pretty = |value: serde_json::Value| {
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    };
    match format {
        ExportFormat::Json => log.map(HopLog::to_json_pretty).unwrap_or_default(),
        ExportFormat::Har => pretty(har_document(traces)),
        ExportFormat::Otlp => pretty(otlp_document(traces)),
        ExportFormat::Mermaid => traces.first().map(|t| mermaid(t.hops)).unwrap_or_default(),
        ExportFormat::Md => traces.first().map(markdown_handout).unwrap_or_default(),
    }
}

async fn load(store: &Store, id: &str) -> anyhow::Result<LoadedTrace> {
    let log = HopLog::from_store(store, id).await?;
    let hops = log.recorded_hops();
    Ok(LoadedTrace { log, hops })
}

fn write_out(output: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

pub async fn run(db: &Path, args: ExportArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(db).await?;
    // Hops recorded since the last grouping get their trace first, as `tracer show` does.
    group_new_hops(&store).await?;
    let outcome = export(&store, &args).await;
    store.close().await;
    outcome
}

async fn export(store: &Store, args: &ExportArgs) -> anyhow::Result<ExitCode> {
    if !args.all {
        let Some(id) = args.id.as_deref() else {
            bail!("give a trace id (or a prefix of one), or --all");
        };
        let trace = load(store, id).await?;
        let text = render(args.format, &[trace.view()], Some(&trace.log));
        write_out(args.output.as_deref(), &text)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.id.is_some() {
        bail!("--all exports every trace; give either a trace id or --all");
    }
    let mut traces = Vec::new();
    for row in store.traces().await? {
        traces.push(load(store, &row.id).await?);
    }
    if traces.is_empty() {
        bail!("{} holds no traces yet", store.path().display());
    }
    if args.format.holds_many() {
        let views: Vec<TraceToExport<'_>> = traces.iter().map(LoadedTrace::view).collect();
        write_out(args.output.as_deref(), &render(args.format, &views, None))?;
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
            &render(args.format, &[trace.view()], Some(&trace.log)),
        )?;
    }
    eprintln!("wrote {} files to {}", traces.len(), dir.display());
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
