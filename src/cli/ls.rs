//! `tracer ls`: traces newest first (or, with `--hops`, the raw hops), as a table or one JSON
//! document. Hops not yet grouped (e.g. written by `tracer wrap`) are grouped first.

use crate::trace::request_anatomy::title_line;
use crate::trace::summary::trace_name;
use std::path::Path;
use std::process::ExitCode;

use super::LsArgs;
use super::stdout_text::{emit_json, out, outln};
use crate::export::hop_log::{SessionEntry, TraceEntry};
use crate::exporter::push::push_command;
use crate::store::exports::SPANS_NOT_EXPORTED;
use crate::store::traces::TraceRow;
use crate::store::{HOPS_NOT_WRITTEN, HopListing, Store};
use crate::trace::correlate::{group_new_hops, recorded_hops};
use crate::trace::dates::{needs_dates, utc_date};
use crate::trace::explain::{human_duration, plural, shorten};
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
            if hops.is_empty() && args.limit > 0 {
                outln!("no hops recorded in {} yet", db.display())?;
            } else if hops.is_empty() {
                outln!(
                    "-n {} lists no hops; {} in {} (tracer ls --hops -n N lists the newest N)",
                    args.limit,
                    plural(
                        usize::try_from(store.hop_count().await?).unwrap_or(0),
                        "hop"
                    ),
                    db.display()
                )?;
            }
        }
    } else if args.sessions {
        super::ls_sessions::run(&store, db, &args).await?;
    } else {
        let traces = list_traces(&store, args.limit).await?;
        if args.json {
            emit_json(&serde_json::to_value(&traces)?)?;
        } else {
            out!("{}", trace_table(&traces))?;
            if traces.is_empty() {
                outln!("{}", nothing_listed(&store, db, args.limit).await?)?;
            }
        }
    }
    let unreadable = store.unreadable_rows();
    if unreadable > 0 {
        crate::say!("{}", unreadable_note(unreadable));
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

/// What an empty listing means: nothing recorded yet, or nothing asked for (`-n 0`).
async fn nothing_listed(store: &Store, db: &Path, limit: i64) -> anyhow::Result<String> {
    if limit > 0 {
        return Ok(format!("no traces recorded in {} yet", db.display()));
    }
    let stored = store.traces().await?.len();
    Ok(format!(
        "-n {limit} lists no traces; {} in {} (tracer ls -n N lists the newest N)",
        plural(stored, "trace"),
        db.display()
    ))
}

/// The one line that says rows were skipped because they could not be read.
pub fn unreadable_note(rows: u64) -> String {
    format!(
        "tracer: {} of the database could not be read and {} skipped \
         (a column holds the wrong type or malformed JSON)",
        plural(usize::try_from(rows).unwrap_or(usize::MAX), "row"),
        if rows == 1 { "was" } else { "were" }
    )
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
    // The session of each, as the hop log names it.
    let sessions = store.trace_sessions().await?;
    let rows: std::collections::HashMap<String, crate::store::sessions::SessionRow> = store
        .sessions()
        .await?
        .into_iter()
        .map(|row| (row.id.clone(), row))
        .collect();
    for entry in &mut out {
        entry.session = sessions
            .get(&entry.id)
            .and_then(|id| rows.get(id))
            .map(SessionEntry::of);
    }
    Ok(out)
}

pub fn trace_table(traces: &[TraceEntry]) -> String {
    trace_table_at(traces, now_ns())
}

/// The table of `trace_table`, dated against `now` (`ls --sessions` writes one per session).
pub fn trace_table_at(traces: &[TraceEntry], now: i64) -> String {
    let mut out = String::new();
    if traces.is_empty() {
        return out;
    }
    let dated = needs_dates(traces.iter().map(|t| t.started_unix_ns), Some(now));
    out.push_str(&format!(
        "ID        {:<width$}  HOPS  DURATION  STATUS          TOKENS                COST        TOOLS             TITLE\n",
        "STARTED",
        width = started_width(dated)
    ));
    for trace in traces {
        let title = match (&trace.title, trace.kind.as_str()) {
            (Some(title), _) => format!("\"{}\"", shorten(&title_line(title), 60)),
            (None, kind) => trace_name(None, Some(kind), &[]).unwrap_or_else(|| "-".to_string()),
        };
        let tools = if trace.tools_used.is_empty() {
            "-".to_string()
        } else {
            one_line(&trace.tools_used.join(",")).into_owned()
        };
        let tokens = trace
            .tokens
            .and_then(|t| t.counts().short())
            .unwrap_or_else(|| "-".to_string());
        let cost = trace
            .cost
            .as_ref()
            .and_then(|c| c.sum().short())
            .unwrap_or_else(|| "-".to_string());
        out.push_str(&format!(
            "{:<8}  {:<width$}  {:>4}  {:>8}  {:<14}  {:<20}  {:<10}  {:<16}  {}\n",
            &trace.id[..trace.id.len().min(8)],
            started(trace.started_unix_ns, dated),
            trace.hop_count,
            trace
                .duration_ns
                .map_or_else(|| "-".to_string(), human_duration),
            trace.status,
            tokens,
            cost,
            truncate(&tools, 16),
            title,
            width = started_width(dated),
        ));
    }
    out
}

pub fn hop_table(hops: &[HopListing]) -> String {
    let mut out = String::new();
    if hops.is_empty() {
        return out;
    }
    let dated = needs_dates(
        hops.iter().map(|h| h.request_started_unix_ns),
        Some(now_ns()),
    );
    out.push_str(&format!(
        "ID        {:<width$}  ROUTE       METHOD  PATH                            STATUS  STATE      TIME\n",
        "STARTED",
        width = started_width(dated)
    ));
    for hop in hops {
        let status = hop
            .status
            .map_or_else(|| "-".to_string(), |s| s.to_string());
        let time = hop.response_ended_unix_ns.map_or_else(
            || "-".to_string(),
            |end| format_ms(end - hop.request_started_unix_ns),
        );
        out.push_str(&format!(
            "{:<8}  {:<width$}  {:<10}  {:<6}  {:<30}  {:<6}  {:<9}  {}\n",
            &hop.id[..hop.id.len().min(8)],
            started(hop.request_started_unix_ns, dated),
            truncate(&one_line(&hop.route), 10),
            truncate(&one_line(&hop.method), 6),
            truncate(&one_line(&hop.path), 30),
            status,
            hop.state,
            time,
            width = started_width(dated),
        ));
    }
    out
}

/// The STARTED cell: `HH:MM:SS.mmm`, after its date when the list spans days or is not today's.
pub fn started(unix_ns: i64, dated: bool) -> String {
    if dated {
        format!("{} {}", utc_date(unix_ns), clock_time(unix_ns))
    } else {
        clock_time(unix_ns)
    }
}

pub fn started_width(dated: bool) -> usize {
    if dated { 23 } else { 12 }
}

pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
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
