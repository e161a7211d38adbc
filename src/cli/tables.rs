//! The tables `tracer ls` prints (traces, hops) and their cells: start times, durations,
//! cut text; `ls --sessions` and `tracer run`'s report print the same trace table.

use tracer_export::hop_log::TraceEntry;
use tracer_store::HopListing;
use tracer_trace::account::summary::trace_name;
use tracer_trace::read::dates::{needs_dates, utc_date};
use tracer_trace::read::request_anatomy::title_line;
use tracer_trace::words::{human_duration, shorten};
use tracer_wire::safe_text::one_line;

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
    // The status column widens for `ok · 3 side calls failed`, only when a row has one.
    let status_width = traces
        .iter()
        .map(|t| t.status_words().chars().count())
        .max()
        .unwrap_or(0)
        .max(14);
    // The tools column widens (to 40 at most) for the host's own tools beside MCP's.
    let tools_width = traces
        .iter()
        .filter(|t| !t.host_tools_used.is_empty())
        .filter_map(|t| t.tools_words(","))
        .map(|tools| tools.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(16, 40);
    out.push_str(&format!(
        "ID        {:<width$}  HOPS  DURATION  {:<status_width$}  TOKENS                COST        {:<tools_width$}  TITLE\n",
        "STARTED",
        "STATUS",
        "TOOLS",
        width = started_width(dated)
    ));
    for trace in traces {
        let title = match (&trace.title, trace.kind.as_str()) {
            (Some(title), _) => format!("\"{}\"", shorten(&title_line(title), 60)),
            (None, kind) => trace_name(None, Some(kind), &[]).unwrap_or_else(|| "-".to_string()),
        };
        let title = match &trace.fork {
            Some(fork) => format!(
                "fork of {} at {}: {} · {title}",
                fork.of.get(..8).unwrap_or(&fork.of),
                fork.at,
                shorten(&one_line(&crate::fork::edits::words_of(&fork.edits)), 50)
            ),
            None => title,
        };
        let tools = trace
            .tools_words(",")
            .map_or_else(|| "-".to_string(), |tools| one_line(&tools).into_owned());
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
            "{:<8}  {:<width$}  {:>4}  {:>8}  {:<status_width$}  {:<20}  {:<10}  {:<tools_width$}  {}\n",
            &trace.id[..trace.id.len().min(8)],
            started(trace.started_unix_ns, dated),
            trace.hop_count,
            trace
                .duration_ns
                .map_or_else(|| "-".to_string(), human_duration),
            trace.status_words(),
            tokens,
            cost,
            truncate(&tools, tools_width),
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
