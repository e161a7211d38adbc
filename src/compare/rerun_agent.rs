//! `tracer rerun ID`: the trace's first request (you → agent) sent again, each run recorded as a
//! new trace by the proxy, then compared with the original.

use std::time::Duration;

use serde_json::{Value, json};

use super::diff::Diff;
use super::load::view_of;
use super::progress::{StopFlag, repeat};
use super::send::{RECORD_WAIT, join_url, post_json, wait_for_trace};
use super::steps::RunView;
use super::tally::{TallyRow, tally};
use tracer_live::load::LoadedTrace;
use tracer_store::Store;
use tracer_wire::hop::Role;
use tracer_wire::trace_context::TraceParent;

/// The request that opened a trace: on which route, to which path, with which body.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryRequest {
    pub route: String,
    pub path: String,
    pub body: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum RerunError {
    #[error(
        "trace {0} has no agent hop (the host was not fronted by an agent route): re-send one model \
         step instead, with --step K --model-url URL"
    )]
    NoAgentHop(String),
    #[error("the agent request of trace {0} was not recorded whole, so it cannot be re-sent")]
    Incomplete(String),
    #[error(
        "no tracer proxy is serving route {0} now; start one (tracer proxy / tracer up) or give --to URL"
    )]
    NoLiveRoute(String),
}

/// The you → agent request of a trace.
pub fn entry_request(trace: &LoadedTrace) -> Result<EntryRequest, RerunError> {
    let hop = trace
        .hops
        .iter()
        .filter(|hop| hop.start.role == Role::Agent)
        .min_by_key(|hop| hop.start.started_unix_ns)
        .ok_or_else(|| RerunError::NoAgentHop(trace.row.id.clone()))?;
    let end = hop
        .end
        .as_ref()
        .filter(|end| !end.request_body.truncated && !end.request_body.bytes.is_empty())
        .ok_or_else(|| RerunError::Incomplete(trace.row.id.clone()))?;
    Ok(EntryRequest {
        route: hop.start.route.clone(),
        path: hop.start.path.clone(),
        body: end.request_body.bytes.clone(),
    })
}

/// The base URL of a live proxy route named `route`: announced, not retired, and accepting.
pub async fn live_route(store: &Store, route: &str) -> anyhow::Result<Option<String>> {
    for served in store.served_routes_named(route).await? {
        if served.role != "agent" || !process_alive(served.pid) {
            continue;
        }
        let connect = tokio::net::TcpStream::connect(served.listen.as_str());
        if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_secs(2), connect).await {
            return Ok(Some(format!("http://{}", served.listen)));
        }
    }
    Ok(None)
}

/// True when process `pid` runs (or exists under another user).
pub fn process_alive(pid: i64) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(errno) => errno == nix::errno::Errno::EPERM,
    }
}

/// One re-run: the new trace read back, or why there is none.
#[derive(Debug, Clone)]
pub struct RerunOutcome {
    pub trace: String,
    pub view: Option<RunView>,
    pub error: Option<String>,
}

/// Sends the entry request `times` times to `to`, waiting for each new trace.
pub async fn rerun_agent(
    store: &Store,
    entry: &EntryRequest,
    to: &str,
    times: u32,
    timeout: Duration,
    stop: &StopFlag,
) -> anyhow::Result<Vec<RerunOutcome>> {
    let url = &join_url(to, &entry.path);
    repeat(times, "answered", stop, move || async move {
        let parent = TraceParent::new_root();
        let trace = parent.trace_id_hex();
        let sent = post_json(url, entry.body.clone(), Some(&parent), timeout).await;
        let outcome = match sent {
            Err(error) => RerunOutcome {
                trace,
                view: None,
                error: Some(error.to_string()),
            },
            Ok(answer) => match wait_for_trace(store, &trace, RECORD_WAIT).await? {
                Some(loaded) => RerunOutcome {
                    trace,
                    view: Some(view_of(&loaded)),
                    error: None,
                },
                None => RerunOutcome {
                    error: Some(format!(
                        "{url} answered HTTP {} but no trace {trace} was recorded in {}: is it a \
                         tracer proxy's agent route recording to this database?",
                        answer.status,
                        store.path().display()
                    )),
                    trace,
                    view: None,
                },
            },
        };
        let verdict = match (&outcome.view, &outcome.error) {
            (Some(view), _) => {
                let calls: Vec<String> = view.calls().iter().map(|c| c.display()).collect();
                format!("trace {} {}", &outcome.trace[..8], calls.join(", "))
            }
            (None, Some(error)) => format!("failed: {error}"),
            (None, None) => "failed".to_string(),
        };
        let ok = outcome.view.is_some();
        Ok((outcome, verdict, ok))
    })
    .await
}

/// The tally of several re-runs against the original, as text.
pub fn render_runs(original: &RunView, to: &str, outcomes: &[RerunOutcome]) -> String {
    let views: Vec<&RunView> = outcomes.iter().filter_map(|o| o.view.as_ref()).collect();
    let same = views
        .iter()
        .filter(|v| v.calls() == original.calls())
        .count();
    let mut out = format!(
        "{} of {} re-runs made the same tool calls as trace {}\n",
        same,
        outcomes.len(),
        original.trace
    );
    let recorded: Vec<String> = original.calls().iter().map(|c| c.display()).collect();
    out.push_str(&format!(
        "original: {}\nsent to: {to}\n\n",
        if recorded.is_empty() {
            "(no tool call)".to_string()
        } else {
            recorded.join(", ")
        }
    ));
    let rows = tally_of(&views);
    out.push_str(&super::tally::render(&rows, views.len()));
    out.push('\n');
    for (index, outcome) in outcomes.iter().enumerate() {
        let line = match (&outcome.view, &outcome.error) {
            (Some(view), _) => Diff::new(original.clone(), view.clone()).summary,
            (None, error) => format!("failed: {}", error.as_deref().unwrap_or("?")),
        };
        out.push_str(&format!("run {}  {}  {line}\n", index + 1, outcome.trace));
    }
    out
}

fn tally_of(views: &[&RunView]) -> Vec<TallyRow> {
    tally(&views.iter().map(|v| v.calls()).collect::<Vec<_>>())
}

/// The tally of several re-runs as JSON.
pub fn runs_json(original: &RunView, to: &str, outcomes: &[RerunOutcome]) -> Value {
    let views: Vec<&RunView> = outcomes.iter().filter_map(|o| o.view.as_ref()).collect();
    json!({
        "original": original.trace,
        "to": to,
        "tool_calls_original": original.calls(),
        "runs": outcomes.iter().map(|o| match &o.view {
            Some(view) => {
                let diff = Diff::new(original.clone(), view.clone());
                json!({
                    "trace": o.trace, "summary": diff.summary,
                    "same_tool_calls": diff.same_tool_calls, "tool_calls": view.calls(),
                    "reply": view.reply, "error": view.agent_error,
                })
            }
            None => json!({"trace": o.trace, "error": o.error}),
        }).collect::<Vec<_>>(),
        "tally": tally_of(&views),
        "total": views.len(),
    })
}
