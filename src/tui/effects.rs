//! Runs the TUI's background work on tokio: polling the store (grouping new hops), reading
//! facts and traces, exporting. Each result comes back to the loop as an `Action`; nothing here
//! touches the screen, and the render loop never waits for it.

mod read_back;

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

use tokio::sync::mpsc::UnboundedSender;

use super::action::{Action, Effect, PollToken};
use super::facts::TraceFacts;
use crate::replay::source;
use tracer_live::live_group::LiveGrouping;
use tracer_live::load::{Bodies, read_trace_hops};
use tracer_store::Store;

/// What the status bar says when the store skipped rows it could not read.
const UNREADABLE_NOTE: &str =
    "some rows of the database could not be read (wrong types or malformed JSON) and are skipped";

/// How many of the newest traces the first poll sends ahead of the whole list.
const FIRST_SCREEN: i64 = 200;

/// Where background work runs and where its results go.
#[derive(Debug, Clone)]
pub struct Effects {
    /// The store, once open (set at start, or when the awaited database appears).
    store: std::sync::Arc<tokio::sync::OnceCell<Store>>,
    /// A database not recorded yet: polls show an empty list until it exists, then open it.
    waiting_for: Option<PathBuf>,
    /// One grouper for the TUI's life: each poll groups only what arrived since the last.
    grouping: std::sync::Arc<tokio::sync::Mutex<LiveGrouping>>,
    /// The folder exports are written to.
    export_dir: PathBuf,
    /// Whether the status bar has said that unreadable rows were skipped.
    unreadable_said: std::sync::Arc<std::sync::atomic::AtomicBool>,
    results: UnboundedSender<Action>,
}

impl Effects {
    pub fn new(
        store: Option<Store>,
        export_dir: PathBuf,
        results: UnboundedSender<Action>,
    ) -> Self {
        Self {
            store: std::sync::Arc::new(tokio::sync::OnceCell::new_with(store)),
            waiting_for: None,
            grouping: Default::default(),
            export_dir,
            unreadable_said: Default::default(),
            results,
        }
    }

    /// Effects over a database that may not exist yet (`tracer tui` before the first
    /// recording): each poll looks for it, shows an empty list while it is missing, and opens
    /// it once a recorder has made it.
    pub fn waiting_for(db: PathBuf, export_dir: PathBuf, results: UnboundedSender<Action>) -> Self {
        Self {
            waiting_for: Some(db),
            ..Self::new(None, export_dir, results)
        }
    }

    /// Starts one effect; `Quit` is the loop's to handle and is ignored here.
    pub fn spawn(&self, effect: Effect) {
        if self.store.get().is_none() && self.waiting_for.is_none() {
            return;
        }
        let cell = self.store.clone();
        let waiting_for = self.waiting_for.clone();
        let results = self.results.clone();
        let export_dir = self.export_dir.clone();
        let grouping = self.grouping.clone();
        let unreadable_said = self.unreadable_said.clone();
        tokio::spawn(async move {
            let store = match (cell.get(), waiting_for) {
                (Some(store), _) => store.clone(),
                (None, Some(db)) => match open_when_there(&cell, &db, &effect).await {
                    Ok(store) => store,
                    Err(action) => {
                        let _ = results.send(action);
                        return;
                    }
                },
                (None, None) => return,
            };
            let unreadable_before = store.unreadable_rows();
            let action = run(&store, &grouping, effect, &export_dir, &results).await;
            if let Some(action) = action {
                // The loop has gone (quitting): nobody needs the result.
                let _ = results.send(action);
            }
            // Rows that could not be read were skipped, not fatal: said once, in the status bar.
            if store.unreadable_rows() > unreadable_before && !unreadable_said.swap(true, Relaxed) {
                let _ = results.send(Action::Failed(UNREADABLE_NOTE.to_string()));
            }
        });
    }
}

/// The awaited database, opened once it exists; else what to tell the loop (an empty list for
/// a poll, a failure when the file is there but cannot be opened).
async fn open_when_there(
    cell: &tokio::sync::OnceCell<Store>,
    db: &std::path::Path,
    effect: &Effect,
) -> Result<Store, Action> {
    if !db.exists() {
        let token = PollToken { hops: 0, traces: 0 };
        return Err(match effect {
            Effect::Poll { last: Some(last) } => Action::PollDone { token: *last },
            Effect::Poll { last: None } => Action::TracesLoaded {
                rows: Vec::new(),
                token,
                partial: false,
                sessions: Default::default(),
            },
            _ => Action::Failed(format!("no database at {} yet", db.display())),
        });
    }
    cell.get_or_try_init(|| Store::open_existing(db))
        .await
        .cloned()
        .map_err(|error| Action::Failed(error.to_string()))
}

async fn run(
    store: &Store,
    grouping: &tokio::sync::Mutex<LiveGrouping>,
    effect: Effect,
    export_dir: &std::path::Path,
    results: &UnboundedSender<Action>,
) -> Option<Action> {
    let failed = |what: &str, error: &dyn std::fmt::Display| {
        tracing::warn!("{what}: {error}");
        Some(Action::Failed(format!("{what}: {error}")))
    };
    match effect {
        Effect::Poll { last } => {
            if last.is_none() {
                // The first screen of a big database before the whole list.
                match store.recent_traces(FIRST_SCREEN).await {
                    Ok(rows) if rows.len() == usize::try_from(FIRST_SCREEN).unwrap_or(0) => {
                        let sessions = session_labels(store).await.unwrap_or_default();
                        let _ = results.send(Action::TracesLoaded {
                            rows,
                            token: PollToken::default(),
                            partial: true,
                            sessions,
                        });
                    }
                    Ok(_) => {}
                    Err(error) => return failed("reading the database", &error),
                }
            }
            match poll(store, grouping, last).await {
                Ok(action) => Some(action),
                Err(error) => failed("reading the database", &error),
            }
        }
        Effect::LoadFacts(ids) => {
            let mut facts = Vec::with_capacity(ids.len());
            for id in ids {
                match read_trace_hops(store, &id, Bodies::LetGo).await {
                    Ok(hops) => facts.push((id, TraceFacts::of(&hops))),
                    Err(error) => return failed("reading a trace", &error),
                }
            }
            Some(Action::FactsLoaded(facts))
        }
        Effect::LoadTrace(id) => match source::from_store_with(store, &id, Bodies::LetGo).await {
            Ok(trace) => {
                let lines = server_stderr(store, &trace.hops).await;
                let notes = agent_notes(store, &trace).await;
                let (trace_id, loaded) = (
                    trace.row.id.clone(),
                    Action::TraceLoaded {
                        trace_id: trace.row.id,
                        title: trace.row.title,
                        hops: trace.hops,
                    },
                );
                if lines.is_empty() && notes.is_empty() {
                    return Some(loaded);
                }
                // The trace first, then the agent's own events and its servers' stderr for the
                // view it opened.
                let _ = results.send(loaded);
                if !notes.is_empty() {
                    let agent = Action::AgentEventsLoaded {
                        trace_id: trace_id.clone(),
                        notes,
                    };
                    if lines.is_empty() {
                        return Some(agent);
                    }
                    let _ = results.send(agent);
                }
                Some(Action::StderrLoaded { trace_id, lines })
            }
            Err(error) => failed("reading the trace", &error),
        },
        Effect::LoadBody { trace_id, hop_id } => {
            Some(read_back::body(store, trace_id, hop_id).await)
        }
        Effect::LoadChanges {
            trace_id,
            hop_id,
            previous_hop_id,
        } => Some(read_back::changes(store, trace_id, hop_id, previous_hop_id).await),
        Effect::Search(text) => match tracer_live::search::matching_traces(store, &text).await {
            Ok(traces) => Some(Action::SearchDone { text, traces }),
            Err(error) => failed("searching the bodies", &error),
        },
        Effect::Export(id) => match super::export::write_trace(store, &id, export_dir).await {
            Ok(path) => Some(Action::Exported {
                path: path.display().to_string(),
            }),
            Err(error) => failed("exporting", &error),
        },
        Effect::Quit => None,
    }
}

/// Groups hops that have no trace yet (unless the last poll's grouping is still at it), then
/// reads the list if anything changed since `last`.
async fn poll(
    store: &Store,
    grouping: &tokio::sync::Mutex<LiveGrouping>,
    last: Option<PollToken>,
) -> tracer_store::Result<Action> {
    let grouped = match (
        store.earliest_unassigned_start().await?,
        grouping.try_lock(),
    ) {
        (Some(_), Ok(mut grouping)) => {
            let report = grouping.pass(store).await?;
            report.assigned + report.traces
        }
        _ => 0,
    };
    let hops = store.hop_count().await?;
    if let Some(last) = last
        && last.hops == hops
        && grouped == 0
    {
        return Ok(Action::PollDone { token: last });
    }
    let rows = store.traces().await?;
    let token = PollToken {
        hops,
        traces: rows.len(),
    };
    Ok(Action::TracesLoaded {
        rows,
        token,
        partial: false,
        sessions: session_labels(store).await?,
    })
}

/// Each trace's session label (the host's own id of its run, else tracer's session id).
async fn session_labels(
    store: &Store,
) -> tracer_store::Result<std::collections::HashMap<String, String>> {
    let sessions: std::collections::HashMap<String, String> = store
        .sessions()
        .await?
        .into_iter()
        .map(|s| {
            let label = s.host_session_id.unwrap_or_else(|| s.id.clone());
            (s.id, label)
        })
        .collect();
    Ok(store
        .trace_sessions()
        .await?
        .into_iter()
        .filter_map(|(trace, session)| Some((trace, sessions.get(&session)?.clone())))
        .collect())
}

/// What the trace's wrapped (stdio) servers wrote to stderr while it lasted, oldest first.
async fn server_stderr(
    store: &Store,
    hops: &[tracer_trace::RecordedHop],
) -> Vec<(String, i64, String)> {
    const MARGIN_NS: i64 = 1_000_000_000;
    let mut routes: Vec<&str> = hops
        .iter()
        .filter(|h| h.start.transport == tracer_wire::hop::Transport::Stdio)
        .map(|h| h.start.route.as_str())
        .collect();
    routes.sort_unstable();
    routes.dedup();
    let times = hops.iter().flat_map(|h| {
        let end = h.end.as_ref().and_then(|e| e.response_ended_unix_ns);
        [Some(h.start.started_unix_ns), end].into_iter().flatten()
    });
    let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for route in routes {
        let lines = store
            .server_logs_between(route, first - MARGIN_NS, last + MARGIN_NS)
            .await
            .unwrap_or_default();
        out.extend(
            lines
                .into_iter()
                .map(|(at, line)| (route.to_string(), at, line)),
        );
    }
    out.sort_by_key(|(_, at, _)| *at);
    out
}

/// The agent's own log events placed in a loaded trace, as the view shows them (none when the
/// store has none, or cannot be read: the trace still opens).
async fn agent_notes(
    store: &tracer_store::Store,
    trace: &tracer_live::load::LoadedTrace,
) -> Vec<crate::tui::app::AgentNote> {
    let placed = (tracer_live::agent_account::for_trace(store, trace).await).unwrap_or_default();
    let hop_id = |i: usize| trace.hops.get(i).map(|h| h.start.id.clone());
    placed
        .into_iter()
        .filter(|p| p.stored.event.signal == tracer_wire::agent_event::Signal::Log)
        .map(|p| {
            let event = &p.stored.event;
            crate::tui::app::AgentNote {
                after_hop_id: p.after.and_then(hop_id),
                at_unix_ns: event.time_unix_ns,
                sentence: tracer_trace::explain::agent_words::sentence(event),
                detail: format!("{} · placed by {}", event.name, p.rule.as_str()),
            }
        })
        .collect()
}
