//! `tracer events`: every event of the agents' own telemetry in the database, by session, each
//! with the trace and message it was placed after and the rule that placed it, or said to be
//! unplaced (kept, never dropped).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::stdout_text::{out, outln};
use super::tables::clock_time;
use tracer_export::hop_log::{Bodies as LogBodies, HopLog};
use tracer_live::correlate::group_new_hops;
use tracer_live::load::{Bodies, load_trace};
use tracer_store::Store;
use tracer_trace::explain::agent_words::{agent_name, sentence};
use tracer_wire::safe_text::one_line;

#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Print one JSON document (an array) instead of text
    #[arg(long)]
    pub json: bool,
    /// Only the events no trace claims
    #[arg(long)]
    pub unplaced: bool,
    /// Only the events of this session (the agent's own session id)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Spans and metric points too (by default the log events, what the agent says happened)
    #[arg(long)]
    pub all: bool,
}

/// Where one event was placed: its trace, the message it follows, the rule.
struct Place {
    trace_id: String,
    after_message: Option<usize>,
    rule: String,
}

pub async fn run(db: &Path, args: EventsArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(db).await?;
    group_new_hops(&store).await?;
    let events = store.all_agent_events().await?;
    let places = if events.is_empty() {
        HashMap::new()
    } else {
        places(&store).await?
    };
    store.close().await;
    let shown: Vec<_> = (events.iter())
        .filter(|e| args.all || e.event.signal == tracer_wire::agent_event::Signal::Log)
        .filter(|e| !args.unplaced || !places.contains_key(&e.id))
        .filter(|e| args.session.is_none() || e.event.keys.session == args.session)
        .collect();
    if args.json {
        let list: Vec<_> = (shown.iter())
            .map(|e| {
                let place = places.get(&e.id);
                json!({
                    "id": e.id, "name": e.event.name, "signal": e.event.signal.as_str(),
                    "agent": agent_name(&e.event), "session": e.event.keys.session,
                    "at_unix_ns": e.event.time_unix_ns, "run_id": e.run_id,
                    "trace_id": place.map(|p| &p.trace_id),
                    "after_message": place.and_then(|p| p.after_message),
                    "placed_by": place.map(|p| &p.rule),
                    "sentence": sentence(&e.event),
                    "attributes": e.event.attributes(),
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if shown.is_empty() {
        outln!(
            "no events of the agents' own telemetry{}",
            if args.unplaced { " unplaced" } else { "" }
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut by_session: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for event in &shown {
        let key = event
            .event
            .keys
            .session
            .clone()
            .unwrap_or_else(|| "(no session)".into());
        by_session.entry(key).or_default().push(event);
    }
    for (session, events) in by_session {
        let unplaced = events
            .iter()
            .filter(|e| !places.contains_key(&e.id))
            .count();
        outln!(
            "session {}  {} · {} event{} · {unplaced} unplaced",
            one_line(&session),
            agent_name(&events[0].event),
            events.len(),
            if events.len() == 1 { "" } else { "s" }
        )?;
        for event in events {
            let place = match places.get(&event.id) {
                Some(p) => format!(
                    "trace {} {} ({})",
                    &p.trace_id[..p.trace_id.len().min(8)],
                    p.after_message
                        .map_or("before message 1".into(), |n| format!("after message {n}")),
                    p.rule
                ),
                None => "unplaced".to_string(),
            };
            out!(
                "  {}  {:<24} {:<44} {}\n",
                clock_time(event.event.time_unix_ns),
                one_line(&tracer_trace::words::shorten(&event.event.name, 24)),
                place,
                one_line(&sentence(&event.event))
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every event a trace claims, placed as `show` places it (the first trace to claim one keeps it).
async fn places(store: &Store) -> anyhow::Result<HashMap<i64, Place>> {
    let mut places = HashMap::new();
    for row in store.traces().await? {
        let trace = load_trace(store, &row.id, Bodies::Readings).await?;
        let placed = tracer_live::agent_account::for_trace(store, &trace).await?;
        if placed.is_empty() {
            continue;
        }
        let hop_ids: Vec<String> = trace.hops.iter().map(|h| h.start.id.clone()).collect();
        let log = HopLog::from_loaded(&trace, LogBodies::LengthsOnly)
            .with_agent_events(&placed, &hop_ids);
        for entry in log.agent_events() {
            places.entry(entry.id).or_insert_with(|| Place {
                trace_id: row.id.clone(),
                after_message: entry.after_message,
                rule: entry.rule.clone(),
            });
        }
    }
    Ok(places)
}
