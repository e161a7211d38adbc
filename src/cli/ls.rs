//! `tracer ls`: traces newest first (or, with `--hops`, the raw hops), as a table or one JSON
//! document. Hops not yet grouped (e.g. written by `tracer wrap`) are grouped first.

use std::path::Path;
use std::process::ExitCode;

use super::LsArgs;
use super::stdout_text::{emit_json, out, outln};
use crate::export::hop_log::TraceEntry;
use crate::exporter::push::push_command;
use crate::store::exports::SPANS_NOT_EXPORTED;
use crate::store::traces::TraceRow;
use crate::store::{HOPS_NOT_WRITTEN, HopListing, Store};
use crate::trace::correlate::{group_new_hops, recorded_hops};
use crate::trace::explain::{human_duration, shorten};
use crate::trace::summarize;
use crate::wire::safe_text::one_line;

pub async fn run(db: &Path, args: LsArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(db).await?;
    group_new_hops(&store).await?;
    let not_written = store.counter(HOPS_NOT_WRITTEN).await?;
    let not_exported = store.counter(SPANS_NOT_EXPORTED).await?;
    if args.hops {
        let hops = store.recent_hops(args.limit).await?;
        if args.json {
            emit_json(&serde_json::to_value(&hops)?)?;
        } else {
            out!("{}", hop_table(&hops))?;
            if hops.is_empty() {
                outln!("no hops recorded in {} yet", db.display())?;
            }
        }
    } else {
        let traces = list_traces(&store, args.limit).await?;
        if args.json {
            emit_json(&serde_json::to_value(&traces)?)?;
        } else {
            out!("{}", trace_table(&traces))?;
            if traces.is_empty() {
                outln!("no traces recorded in {} yet", db.display())?;
            }
        }
    }
    if not_written > 0 && !args.json {
        outln!("{not_written} hops were carried but not written (store busy or failing)")?;
    }
    if not_exported > 0 && !args.json {
        // Per receiver, named as a push reaches it again; the rest a receiver took and rejected.
        let targets = store.failed_targets().await?;
        let failed: i64 = targets.iter().map(|(_, spans)| spans).sum();
        for (target, spans) in targets {
            outln!(
                "{spans} spans were not exported to {target} ({} sends them)",
                push_command(&target)
            )?;
        }
        if not_exported > failed {
            outln!(
                "{} spans were rejected by an OpenTelemetry receiver (a push does not send them again)",
                not_exported - failed
            )?;
        }
    }
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

/// The newest `limit` traces with what their hops say about them.
pub async fn list_traces(store: &Store, limit: i64) -> anyhow::Result<Vec<TraceEntry>> {
    let rows: Vec<TraceRow> = store.traces().await?;
    let mut out = Vec::new();
    for row in rows.into_iter().take(usize::try_from(limit).unwrap_or(0)) {
        let hops = recorded_hops(store, &row.id).await?;
        let mut summary = summarize(&hops);
        let title = row.title.clone().or(summary.title.take());
        out.push(TraceEntry {
            title,
            ..TraceEntry::new(row, summary)
        });
    }
    Ok(out)
}

pub fn trace_table(traces: &[TraceEntry]) -> String {
    let mut out = String::new();
    if traces.is_empty() {
        return out;
    }
    out.push_str(
        "ID        STARTED       HOPS  DURATION  STATUS          TOOLS             TITLE\n",
    );
    for trace in traces {
        let title = match (&trace.title, trace.kind.as_str()) {
            (Some(title), _) => format!("\"{}\"", shorten(title, 60)),
            (None, "setup") => "(start-up discovery)".to_string(),
            (None, _) => "-".to_string(),
        };
        let tools = if trace.tools_used.is_empty() {
            "-".to_string()
        } else {
            one_line(&trace.tools_used.join(",")).into_owned()
        };
        out.push_str(&format!(
            "{:<8}  {:<12}  {:>4}  {:>8}  {:<14}  {:<16}  {}\n",
            &trace.id[..trace.id.len().min(8)],
            clock_time(trace.started_unix_ns),
            trace.hop_count,
            trace
                .duration_ns
                .map_or_else(|| "-".to_string(), human_duration),
            trace.status,
            truncate(&tools, 16),
            title,
        ));
    }
    out
}

pub fn hop_table(hops: &[HopListing]) -> String {
    let mut out = String::new();
    if hops.is_empty() {
        return out;
    }
    out.push_str("ID        STARTED       ROUTE       METHOD  PATH                            STATUS  STATE      TIME\n");
    for hop in hops {
        let status = hop
            .status
            .map_or_else(|| "-".to_string(), |s| s.to_string());
        let time = hop.response_ended_unix_ns.map_or_else(
            || "-".to_string(),
            |end| format_ms(end - hop.request_started_unix_ns),
        );
        out.push_str(&format!(
            "{:<8}  {:<12}  {:<10}  {:<6}  {:<30}  {:<6}  {:<9}  {}\n",
            &hop.id[..hop.id.len().min(8)],
            clock_time(hop.request_started_unix_ns),
            truncate(&one_line(&hop.route), 10),
            truncate(&one_line(&hop.method), 6),
            truncate(&one_line(&hop.path), 30),
            status,
            hop.state,
            time,
        ));
    }
    out
}

/// `HH:MM:SS.mmm` (UTC) of a Unix-nanosecond timestamp.
pub fn clock_time(unix_ns: i64) -> String {
    let ms = unix_ns.div_euclid(1_000_000);
    let day_ms = ms.rem_euclid(86_400_000);
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        day_ms / 3_600_000,
        day_ms / 60_000 % 60,
        day_ms / 1000 % 60,
        day_ms % 1000
    )
}

pub fn format_ms(ns: i64) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 10_000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let kept: String = text.chars().take(width.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}
