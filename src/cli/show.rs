//! `tracer show ID|FILE`: one trace (from the database, or a hop-log file) as numbered, explained
//! messages, or (`--json`) its JSON hop log.

use std::path::Path;
use std::process::ExitCode;
use tracer_trace::account::summary::trace_name;
use tracer_trace::read::request_anatomy::title_line;

use anyhow::Context;

use super::ShowArgs;
use super::stdout_text::{emit_json_streamed, out};
use super::tables::clock_time;
use crate::replay::plain::wrap;
use crate::replay::source::is_file;
use tracer_export::hop_log::ForkEntry;
use tracer_export::hop_log::{Bodies as LogBodies, HopLog, MessageEntry};
use tracer_live::correlate::group_new_hops;
use tracer_live::load::{Bodies, load_trace};
use tracer_store::Store;
use tracer_trace::read::request_views::{RequestView, request_views};
use tracer_trace::words::{human_duration, plural, shorten};
use tracer_wire::safe_text::one_line;

/// Explanations wrap at this many columns.
const WIDTH: usize = 100;
/// Explanations are indented under their message by this much.
const INDENT: &str = "       ";

pub async fn run(db: &Path, args: ShowArgs) -> anyhow::Result<ExitCode> {
    let mut stderr = Vec::new();
    let (log, hops) = if is_file(&args.id) {
        // A hop-log file is shown as `import` then `show` would show it, with no database.
        let bytes = std::fs::read(&args.id).with_context(|| format!("reading {}", args.id))?;
        let log = HopLog::from_file(&bytes).with_context(|| args.id.clone())?;
        let hops = if args.json {
            Vec::new()
        } else {
            log.recorded_hops()
        };
        (log, hops)
    } else {
        let store = Store::open_existing(db).await?;
        group_new_hops(&store).await?;
        if args.json {
            return show_json(store, &args.id).await;
        }
        // The text faces read the hops themselves: their log carries no copy of the bodies.
        let loaded = {
            // `--changes` compares request bodies; the numbered trace needs none once read.
            let bodies = match args.changes {
                true => Bodies::Kept,
                false => Bodies::LetGo,
            };
            match load_trace(&store, &args.id, bodies).await {
                Ok(trace) => {
                    let log = HopLog::from_loaded(&trace, LogBodies::LengthsOnly);
                    let log = super::show_agent::placed(&store, &trace, log).await;
                    let fork = store.fork_of_trace(trace.id()).await.ok().flatten();
                    let log = log.with_fork(fork.as_ref().map(ForkEntry::of));
                    Ok((log, trace.hops))
                }
                Err(error) => Err(error),
            }
        };
        if let Ok((log, _)) = &loaded {
            stderr = super::show_stderr::of_trace(&store, log).await;
        }
        let unreadable = store.unreadable_rows();
        store.close().await;
        if unreadable > 0 {
            tracer_serve::say!("{}", super::ls::unreadable_note(unreadable));
        }
        loaded?
    };
    if args.json {
        emit_json_streamed(&log)?;
    } else if args.changes {
        out!("{}", super::show_changes::render_hops(&log, &hops))?;
    } else {
        out!(
            "{}",
            render_hops_with_stderr(&log, &hops, &stderr, args.joins)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `show --json` of a stored trace: its hop log, each large request body let go of once read
/// and fetched back from the store as its message is written, so one is held at a time.
async fn show_json(store: Store, id: &str) -> anyhow::Result<ExitCode> {
    let loaded = match load_trace(&store, id, Bodies::LetGo).await {
        Ok(trace) => {
            let log = HopLog::from_loaded(&trace, LogBodies::Kept);
            Ok(super::show_agent::placed(&store, &trace, log).await)
        }
        Err(error) => Err(error),
    };
    let unreadable = store.unreadable_rows();
    let log = match loaded {
        Ok(log) => log,
        Err(error) => {
            store.close().await;
            return Err(error.into());
        }
    };
    let fetching = store.clone();
    let written = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Handle::current();
        let fetch = |hop_id: &str| {
            let hop = runtime.block_on(fetching.hop_by_id(hop_id));
            hop.ok().map(|hop| hop.end.request_body)
        };
        emit_json_streamed(&log.streamed(fetch))
    })
    .await;
    store.close().await;
    if unreadable > 0 {
        tracer_serve::say!("{}", super::ls::unreadable_note(unreadable));
    }
    written??;
    Ok(ExitCode::SUCCESS)
}

/// The plain-text trace: a heading, then each message with its explanation under it.
pub fn render(log: &HopLog) -> String {
    render_with_stderr(log, &[])
}

/// The plain-text trace with a wrapped server's stderr lines among its messages, by time.
pub fn render_with_stderr(log: &HopLog, stderr: &[super::show_stderr::StderrLine]) -> String {
    render_hops_with_stderr(log, &log.recorded_hops(), stderr, false)
}

/// The plain-text trace of a log and its hops (as loaded: the log's bodies are not read).
fn render_hops_with_stderr(
    log: &HopLog,
    hops: &[tracer_trace::RecordedHop],
    stderr: &[super::show_stderr::StderrLine],
    joins: bool,
) -> String {
    let trace = log.trace();
    let mut out = format!("trace {}", trace.id);
    match (log.title(), trace.kind.as_str()) {
        (Some(title), _) => out.push_str(&format!("  \"{}\"", one_line(&title_line(title)))),
        (None, kind) => {
            if let Some(name) = trace_name(None, Some(kind), &[]) {
                out.push_str(&format!("  {name}"));
            }
        }
    }
    out.push('\n');
    if let Some(fork) = &trace.fork {
        out.push_str(&format!("  {}\n", crate::fork::report::fork_line(fork)));
    }
    let mut facts = vec![
        format!("started {} UTC", clock_time(trace.started_unix_ns)),
        plural(trace.hop_count, "hop"),
        plural(trace.message_count, "message"),
    ];
    if let Some(duration) = trace.duration_ns {
        facts.push(human_duration(duration));
    }
    facts.push(trace.status_words());
    if let Some(tokens) = trace.tokens.and_then(|t| t.counts().short()) {
        facts.push(format!("tokens: {tokens}"));
    }
    if let Some(tools) = trace.tools_words(", ") {
        facts.push(format!("tools: {}", one_line(&tools)));
    }
    out.push_str(&format!("  {}\n", facts.join(" · ")));
    if let Some(billed) = super::cost_text::billed_line(
        trace.tokens.as_ref(),
        trace.cost.as_ref(),
        trace.last_prompt,
    ) {
        out.push_str(&format!("  {}\n", one_line(&billed)));
    }
    out.push('\n');
    let origin = log
        .shown_messages()
        .next()
        .map_or(trace.started_unix_ns, |m| m.at_unix_ns);
    let views = request_views(hops);
    let caches = tracer_trace::account::cache_verdict::cache_reports(hops);
    let shares = tracer_trace::account::context_shares::context_shares(hops);
    let mut stderr = stderr.iter().peekable();
    out.push_str(&super::show_agent::lines_after(log, None, joins));
    // A hop's note goes under its last answer (an MCP stream's answers are several messages).
    let mut last_answer: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for message in log.shown_messages().filter(|m| m.direction == "←") {
        last_answer.insert(&message.hop_id, message.number);
    }
    for message in log.shown_messages() {
        while let Some(line) = stderr.next_if(|l| l.at_unix_ns <= message.at_unix_ns) {
            out.push_str(&super::show_stderr::line_text(line, origin));
        }
        out.push_str(&message_line(log, message, origin));
        out.push('\n');
        let view = views.iter().find(|v| v.hop_id == message.hop_id);
        if let Some(view) = view.filter(|_| message.direction == "→") {
            for line in request_lines(view) {
                for line in wrap(&line, WIDTH - INDENT.len()) {
                    out.push_str(INDENT);
                    out.push_str(&line);
                    out.push('\n');
                }
            }
        }
        if message.direction == "→"
            && let Some(parts) = shares.iter().find(|s| s.hop_id == message.hop_id)
        {
            for line in parts.lines() {
                out.push_str(&format!("{INDENT}{}\n", one_line(&line)));
            }
        }
        for line in wrap(&message.explanation, WIDTH - INDENT.len()) {
            out.push_str(INDENT);
            out.push_str(&line);
            out.push('\n');
        }
        if let Some(tokens) = message.tokens.and_then(|t| t.counts().text()) {
            out.push_str(&format!("{INDENT}tokens: {tokens}\n"));
        }
        if let Some(cost) = &message.cost {
            out.push_str(&format!("{INDENT}cost: {}\n", one_line(&cost.call_text())));
        }
        if message.direction == "←"
            && let Some(cache) = caches.iter().find(|c| c.hop_id == message.hop_id)
        {
            for line in wrap(&cache.line(), WIDTH - INDENT.len()) {
                out.push_str(&format!("{INDENT}{line}\n"));
            }
        }
        if message.direction == "←" {
            if last_answer.get(message.hop_id.as_str()) == Some(&message.number) {
                out.push_str(&note_lines(hops, message));
            }
            out.push_str(&frame_lines(hops, message));
        }
        out.push_str(&super::show_agent::lines_after(
            log,
            Some(message.number),
            joins,
        ));
    }
    for line in stderr {
        out.push_str(&super::show_stderr::line_text(line, origin));
    }
    out
}

/// How a hop ended, when that is worth saying and is no failure (a body ended by the upstream's
/// close without TLS `close_notify`, a client that stopped reading after the last event).
fn note_lines(hops: &[tracer_trace::RecordedHop], message: &MessageEntry) -> String {
    let note = hops
        .iter()
        .find(|h| h.start.id == message.hop_id)
        .and_then(|h| h.end.as_ref())
        .and_then(|e| e.note.as_deref());
    let Some(note) = note else {
        return String::new();
    };
    wrap(
        &format!("how it ended: {}", one_line(note)),
        WIDTH - INDENT.len(),
    )
    .into_iter()
    .map(|line| format!("{INDENT}{line}\n"))
    .collect()
}

/// WebSocket messages listed under a hop's response.
const FRAMES_SHOWN: usize = 40;

/// A WebSocket hop's messages, one a line, under its response (the first `FRAMES_SHOWN`).
fn frame_lines(hops: &[tracer_trace::RecordedHop], message: &MessageEntry) -> String {
    let Some(hop) = hops.iter().find(|h| h.start.id == message.hop_id) else {
        return String::new();
    };
    let Some(record) = hop.end.as_ref().and_then(|e| e.websocket.as_ref()) else {
        return String::new();
    };
    let mut out = String::new();
    for m in record.messages.iter().take(FRAMES_SHOWN) {
        let line = tracer_trace::explain::ws_lines::frame_line(m, hop.start.started_unix_ns);
        out.push_str(&format!("{INDENT}  {line}\n"));
    }
    let more = (record.messages.len().saturating_sub(FRAMES_SHOWN) as u64) + record.not_listed;
    if more > 0 {
        out.push_str(&format!(
            "{INDENT}  … and {} (`tracer show --json` lists every one kept)\n",
            plural(usize::try_from(more).unwrap_or(usize::MAX), "more message")
        ));
    }
    out
}

/// What a model request carries, on a line (`system 3 blocks + 1 message, 12.3 KB · tools 29:
/// 24 the host's, 5 from notes (mcp) · 1 message`), and the user's words when its conversation
/// starts here.
fn request_lines(view: &RequestView) -> Vec<String> {
    let mut lines = vec![one_line(&view.anatomy.line()).into_owned()];
    if view.anatomy.new_messages.is_none()
        && let Some(words) = &view.user_words
    {
        lines.push(format!("the user's words: \"{}\"", shorten(words, 200)));
    }
    lines
}

fn message_line(log: &HopLog, message: &MessageEntry, origin: i64) -> String {
    let head = if message.direction == "→" {
        format!("{} {}", message.method, message.path)
    } else {
        match message.status {
            Some(status) => status.to_string(),
            None => log
                .hops()
                .iter()
                .find(|hop| hop.id == message.hop_id)
                .map_or_else(|| "-".to_string(), |hop| hop.state.as_str().to_string()),
        }
    };
    let mut timing = format!("+{}", human_duration(message.at_unix_ns - origin));
    if let Some(took) = message.timings.duration_ns {
        timing.push_str(&format!(", took {}", human_duration(took)));
    }
    format!(
        "{:>3} {} {} → {}  {}  {}  ({timing})",
        message.number, message.direction, message.from, message.to, head, message.summary
    )
}
