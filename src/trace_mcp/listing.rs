//! The tools that look across traces: `list_traces`, `search` and `tool_stats`.

use serde_json::json;

use super::args::Args;
use super::{TraceServer, answer, db_error};
use tracer_export::body_text::iso8601_utc;
use tracer_trace::words::{human_duration, plural, shorten};
use tracer_trace::{TraceStatus, summarize};
use tracer_wire::mcp::CallToolResult;

/// At most this many traces are read to answer one call (the text says when it stopped).
pub(super) const SCAN_LIMIT: usize = 2000;
/// Characters of a title in a listing line.
const TITLE_CHARS: usize = 60;

/// The first characters of an id: eight, or more when another id starts with those eight.
pub(super) fn short_id<'a>(id: &'a str, all: &[String]) -> &'a str {
    let mut length = 8;
    while length < id.len()
        && all
            .iter()
            .any(|other| other != id && other.starts_with(&id[..length]))
    {
        length += 1;
    }
    id.get(..length).unwrap_or(id)
}

/// A status as the model may write it: `Tool_Error` is `tool error`.
fn normalized(status: &str) -> String {
    status.trim().to_lowercase().replace(['_', '-'], " ")
}

/// Whether a trace status matches the `status` argument (`error` = anything that went wrong).
fn status_matches(status: TraceStatus, wanted: &str) -> bool {
    match normalized(wanted).as_str() {
        "error" | "errors" => !matches!(status, TraceStatus::Ok | TraceStatus::InFlight),
        other => status.as_str() == other,
    }
}

const STATUSES: &str = "ok, error, tool error, protocol error, http error, failed, in flight";
const KNOWN_STATUSES: [&str; 8] = [
    "ok",
    "error",
    "errors",
    "tool error",
    "protocol error",
    "http error",
    "failed",
    "in flight",
];

impl TraceServer {
    pub(super) async fn list_traces(
        &self,
        args: &Args<'_>,
        now: i64,
    ) -> Result<CallToolResult, String> {
        let limit = args.number("limit", 1, 100)?.unwrap_or(10) as usize;
        let since = args.since("since", now)?;
        let text = args.text("text")?.map(str::to_lowercase);
        let status = args.text("status")?;
        if let Some(status) = status
            && !KNOWN_STATUSES.contains(&normalized(status).as_str())
        {
            return Err(format!("Unknown status `{status}`; use one of: {STATUSES}"));
        }
        let tool = args.text("tool")?;
        let rows = self.store.traces().await.map_err(db_error)?;
        let ids: Vec<String> = rows.iter().map(|row| row.id.clone()).collect();
        let candidates = rows.into_iter().filter(|row| {
            since.is_none_or(|since| row.started_unix_ns >= since)
                && text.as_ref().is_none_or(|text| {
                    row.title
                        .as_deref()
                        .is_some_and(|t| t.to_lowercase().contains(text))
                })
        });
        let (mut lines, mut found, mut scanned, mut more) = (Vec::new(), Vec::new(), 0, false);
        for row in candidates {
            if found.len() == limit {
                more = true;
                break;
            }
            if scanned == SCAN_LIMIT {
                more = true;
                lines.push(format!(
                    "(stopped after reading {SCAN_LIMIT} traces; narrow with since or text)"
                ));
                break;
            }
            scanned += 1;
            let summary = summarize(&self.hops(&row.id).await?);
            if status.is_some_and(|s| !status_matches(summary.status, s))
                || tool.is_some_and(|t| !summary.tools_used.iter().any(|used| used == t))
            {
                continue;
            }
            let duration = summary
                .duration_ns
                .map_or("in flight".to_owned(), human_duration);
            let tools = summary
                .tools_words(", ")
                .map_or_else(|| "no tools".to_owned(), |tools| format!("tools: {tools}"));
            let title =
                tracer_trace::trace_name(row.title.as_deref(), Some(row.kind.as_str()), &[])
                    .unwrap_or_else(|| "(untitled)".into());
            lines.push(format!(
                "{}  {}  \"{}\"  {}, {}, {}, {tools}",
                short_id(&row.id, &ids),
                iso8601_utc(row.started_unix_ns),
                shorten(&title, TITLE_CHARS),
                plural(summary.hops, "hop"),
                duration,
                summary.status_words(),
            ));
            found.push(json!({
                "id": row.id,
                "start": iso8601_utc(row.started_unix_ns),
                "title": row.title,
                "kind": row.kind,
                "hops": summary.hops,
                "messages": summary.messages,
                "duration_ms": summary.duration_ns.map(|ns| ns as f64 / 1e6),
                "status": summary.status.as_str(),
                "tools": summary.tools_used,
                "host_tools": summary.host_tools_used,
                "side_calls_failed": summary.side_calls_failed,
            }));
        }
        let text = if found.is_empty() {
            let filtered = args.text("since")?.is_some()
                || args.text("text")?.is_some()
                || status.is_some()
                || tool.is_some();
            if filtered {
                "No trace matches. Try list_traces without filters.".to_owned()
            } else {
                "The database holds no traces yet.".to_owned()
            }
        } else {
            let mut text = format!(
                "{} newest first{}:\n{}\n",
                plural(found.len(), "trace"),
                if more {
                    " (more match: raise limit)"
                } else {
                    ""
                },
                lines.join("\n")
            );
            text.push_str("Next: get_trace with an id above (these first characters are enough).");
            text
        };
        Ok(answer(text, json!({ "traces": found, "more": more })))
    }

    /// The one search `tracer search` and the TUI's `body:` run (`tracer_live::search`).
    pub(super) async fn search(&self, args: &Args<'_>) -> Result<CallToolResult, String> {
        let needle = args.required_text("text")?;
        let limit = args.number("limit", 1, 100)?.unwrap_or(20) as usize;
        let report = tracer_live::search::search(&self.store, needle, limit)
            .await
            .map_err(db_error)?;
        let ids: Vec<String> = report.traces.iter().map(|t| t.id.clone()).collect();
        let (mut lines, mut structured) = (Vec::new(), Vec::new());
        for trace in &report.traces {
            let numbers: Vec<usize> = trace.messages.iter().map(|m| m.number).collect();
            let mut listed: Vec<String> = numbers.iter().take(50).map(usize::to_string).collect();
            if numbers.len() > listed.len() {
                listed.push(format!("… ({} in all)", numbers.len()));
            }
            let place = match (trace.in_title, numbers.len()) {
                (true, 0) => "its title".to_string(),
                (in_title, count) => format!(
                    "{}{} {}",
                    if in_title { "its title, " } else { "" },
                    if count == 1 { "message" } else { "messages" },
                    listed.join(", ")
                ),
            };
            lines.push(format!(
                "{}  \"{}\"  {place}",
                short_id(&trace.id, &ids),
                shorten(&trace.title, TITLE_CHARS),
            ));
            if let Some(first) = trace.messages.first() {
                lines.push(format!("    {}: {}", first.number, first.excerpt));
            }
            structured.push(json!({
                "trace": trace.id,
                "title": trace.title,
                "in_title": trace.in_title,
                "messages": numbers,
                "excerpts": trace.messages,
            }));
        }
        let mut text = if lines.is_empty() {
            format!("\"{needle}\" occurs in no trace title or recorded body.")
        } else {
            format!(
                "\"{needle}\" occurs in {}{}:\n{}\nNext: get_message with a trace id and a message number to read it.",
                plural(report.traces.len() + report.more, "trace"),
                if report.more > 0 {
                    format!(" (the newest {} listed: raise limit)", report.traces.len())
                } else {
                    String::new()
                },
                lines.join("\n")
            )
        };
        if report.ungrouped_hops > 0 {
            text.push_str(&format!(
                "\n({} not grouped into a trace yet.)",
                plural(report.ungrouped_hops, "hop")
            ));
        }
        Ok(answer(
            text,
            json!({
                "text": needle,
                "traces": structured,
                "more": report.more,
                "ungrouped_hops": report.ungrouped_hops,
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_grow_until_unique() {
        let all = vec![
            "0000000000aa".to_owned(),
            "0000000000ab".to_owned(),
            "f0de9080c655".to_owned(),
        ];
        assert_eq!(short_id("f0de9080c655", &all), "f0de9080");
        assert_eq!(short_id("0000000000aa", &all), "0000000000aa");
        assert!(status_matches(TraceStatus::ToolError, "Tool_Error"));
        assert!(status_matches(TraceStatus::Failed, "error"));
        assert!(!status_matches(TraceStatus::Ok, "error"));
    }
}
