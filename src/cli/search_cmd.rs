//! `tracer search TEXT`: the traces whose titles or messages hold a text, newest first, with the
//! numbers of the messages that hold it and an excerpt of each (`tracer_live::search`), or `--json`.
//! Exits 1 when nothing matches, as grep does.

use std::path::Path;
use std::process::ExitCode;

use super::SearchArgs;
use super::stdout_text::{emit_json, outln};
use super::tables::{started, started_width};
use tracer_live::correlate::group_new_hops;
use tracer_live::search::{SearchReport, search};
use tracer_store::Store;
use tracer_trace::read::dates::needs_dates;
use tracer_trace::words::{plural, shorten};
use tracer_wire::safe_text::one_line;

/// Characters of a title in the listing.
const TITLE_CHARS: usize = 60;
/// Messages of a trace shown with their excerpt; the rest by number, at most `NUMBERS`.
const EXCERPTS: usize = 10;
const NUMBERS: usize = 30;

pub async fn run(db: &Path, args: SearchArgs) -> anyhow::Result<ExitCode> {
    if args.text.trim().is_empty() {
        anyhow::bail!("nothing to search for: give a text, e.g. `tracer search \"buy milk\"`");
    }
    let store = Store::open_existing(db).await?;
    group_new_hops(&store).await?;
    let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
    let report = search(&store, &args.text, limit).await?;
    store.close().await;
    let found = !report.traces.is_empty();
    if args.json {
        emit_json(&tracer_export::listing::search_json(&report))?;
    } else {
        print_text(&report)?;
    }
    Ok(if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_text(report: &SearchReport) -> std::io::Result<()> {
    let text = one_line(&report.text).into_owned();
    if report.traces.is_empty() {
        outln!("\"{text}\" occurs in no trace (titles and bodies searched).")?;
    } else {
        outln!(
            "\"{text}\" occurs in {}:",
            plural(report.traces.len() + report.more, "trace")
        )?;
    }
    let dated = needs_dates(
        report.traces.iter().map(|t| t.started_unix_ns),
        Some(super::tables::now_ns()),
    );
    for trace in &report.traces {
        let place = match (trace.in_title, trace.messages.len()) {
            (true, 0) => "in its title".to_string(),
            (true, _) => format!("in its title and {}", messages(trace.messages.len())),
            (false, count) => format!("in {}", messages(count)),
        };
        outln!(
            "\n{:<8}  {:<width$}  \"{}\"  {place}",
            &trace.id[..trace.id.len().min(8)],
            started(trace.started_unix_ns, dated),
            one_line(&shorten(&trace.title, TITLE_CHARS)),
            width = started_width(dated),
        )?;
        for message in trace.messages.iter().take(EXCERPTS) {
            let arrow = if message.direction == "request" {
                "→"
            } else {
                "←"
            };
            outln!(
                "  {:>4} {arrow}  {}",
                message.number,
                one_line(&message.excerpt)
            )?;
        }
        let rest: Vec<String> = trace
            .messages
            .iter()
            .skip(EXCERPTS)
            .map(|m| m.number.to_string())
            .collect();
        if !rest.is_empty() {
            let listed = rest.len().min(NUMBERS);
            outln!(
                "        and {}: {}{}",
                messages(rest.len()),
                rest[..listed].join(", "),
                if listed < rest.len() {
                    ", … (--json lists every one)"
                } else {
                    ""
                }
            )?;
        }
    }
    if report.more > 0 {
        outln!(
            "\n({} more: --limit lists more, newest first.)",
            plural(report.more, "trace")
        )?;
    }
    if report.ungrouped_hops > 0 {
        outln!(
            "({} not grouped into a trace yet.)",
            plural(report.ungrouped_hops, "hop")
        )?;
    }
    if !report.traces.is_empty() {
        outln!("\nNext: tracer show ID (the messages above by their numbers).")?;
    }
    Ok(())
}

fn messages(count: usize) -> String {
    if count == 1 {
        "message".to_string()
    } else {
        format!("{count} messages")
    }
}
