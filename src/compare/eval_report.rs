//! Eval runs read back and shown: a run's table, total and cost, and the list of runs.

use serde_json::{Value, json};

use super::eval_run::{Attempt, EvalOutcome, QuestionResult};
use super::judge::Reason;
use tracer_store::Store;
use tracer_store::eval_rows::EvalRunRow;
use tracer_trace::account::cost::CostSum;
use tracer_trace::words::shorten;

/// Reads a stored run and its verdicts.
pub async fn load_outcome(store: &Store, run: &EvalRunRow) -> anyhow::Result<EvalOutcome> {
    let rows = store.eval_results(run.id).await?;
    let mut questions: Vec<(String, Vec<Attempt>)> = Vec::new();
    for row in rows {
        let reasons: Vec<Reason> = serde_json::from_str(&row.reasons)?;
        let cost = match row.trace_id.as_deref() {
            Some(trace) => trace_cost(store, trace).await,
            None => None,
        };
        let attempt = Attempt {
            pass: row.pass,
            reasons,
            trace: row.trace_id,
            calls: Vec::new(),
            reply: row.reply,
            cost,
        };
        match questions.iter_mut().find(|(id, _)| *id == row.question_id) {
            Some((_, attempts)) => attempts.push(attempt),
            None => questions.push((row.question_id, vec![attempt])),
        }
    }
    Ok(EvalOutcome {
        run: run.id,
        label: run.label.clone(),
        state: run.state.clone(),
        total: usize::try_from(run.total).unwrap_or(0),
        questions: questions
            .into_iter()
            .map(|(id, runs)| QuestionResult::new(id, runs))
            .collect(),
    })
}

/// What the model calls of a stored trace cost; None when the trace is no longer there.
async fn trace_cost(store: &Store, trace: &str) -> Option<CostSum> {
    let loaded = tracer_live::load::load_trace(store, trace, tracer_live::load::Bodies::Kept)
        .await
        .ok()?;
    Some(tracer_trace::summarize(&loaded.hops).cost)
}

/// A question's cost for the table: `≈ $0.0123`, `≥ …`, `unknown`, `-` (no model call).
fn cost_cell(cost: &CostSum) -> String {
    cost.short().unwrap_or_else(|| "-".to_string())
}

/// The run's cost under its total: `cost: ≈ $0.41 billed across 27 calls (estimate at list
/// prices, …)`; empty when no model call was recorded.
fn cost_line(outcome: &EvalOutcome) -> String {
    match outcome.cost().text() {
        Some(text) => format!(
            "cost: {text} ({})\n",
            tracer_trace::account::cost::estimate_label()
        ),
        None => String::new(),
    }
}

fn short_trace(trace: Option<&str>) -> String {
    trace.map_or("-".into(), |t| t.chars().take(8).collect())
}

pub(super) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    for row in rows {
        out.push_str(&line(row.clone()));
    }
    out
}

/// The total line: `26/27 passed (run 3 "new descriptions")`, noting a partial run.
pub fn total_line(outcome: &EvalOutcome) -> String {
    let label = outcome
        .label
        .as_deref()
        .map(|l| format!(" \"{l}\""))
        .unwrap_or_default();
    let partial = if outcome.state == "complete" {
        String::new()
    } else {
        format!(
            "; {}: {} of {} questions judged",
            outcome.state,
            outcome.questions.len(),
            outcome.total
        )
    };
    format!(
        "{}/{} passed (run {}{label}{partial})",
        outcome.passed(),
        outcome.total,
        outcome.run
    )
}

/// A run as a table of questions, then its total.
pub fn render_run(outcome: &EvalOutcome) -> String {
    let rows: Vec<Vec<String>> = outcome
        .questions
        .iter()
        .map(|q| {
            let passes = q.runs.iter().filter(|a| a.pass).count();
            let result = match (q.passed, q.runs.len()) {
                (true, 1) => "pass".to_string(),
                (false, 1) => "FAIL".to_string(),
                (_, n) => format!("{passes}/{n}"),
            };
            let failing = q.runs.iter().find(|a| !a.pass);
            let reasons = failing.map_or(String::new(), |a| {
                let text: Vec<String> = a
                    .reasons
                    .iter()
                    .map(|r| format!("{}: {}", r.reason, r.message))
                    .collect();
                shorten(&text.join("; "), 90)
            });
            let trace = failing.or(q.runs.first()).and_then(|a| a.trace.as_deref());
            vec![
                q.id.clone(),
                result,
                short_trace(trace),
                cost_cell(&q.cost()),
                reasons,
            ]
        })
        .collect();
    let mut out = table(&["QUESTION", "RESULT", "TRACE", "COST", "REASONS"], &rows);
    out.push_str(&agent_errors(outcome));
    out.push('\n');
    out.push_str(&total_line(outcome));
    out.push('\n');
    out.push_str(&cost_line(outcome));
    out
}

/// The agents' own words for the answers that failed with `agent_error`, whole: the table cuts
/// its REASONS column, and "HTTP 502" alone says nothing of why.
fn agent_errors(outcome: &EvalOutcome) -> String {
    let lines: Vec<String> = outcome
        .questions
        .iter()
        .filter_map(|q| {
            let reason = q
                .runs
                .iter()
                .flat_map(|a| &a.reasons)
                .find(|r| r.reason == "agent_error")?;
            Some(format!("  {}: {}\n", q.id, reason.message))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nagent errors, as the agent said them:\n{}",
        lines.concat()
    )
}

/// `tracer eval --list` as text.
pub fn render_list(runs: &[EvalRunRow]) -> String {
    if runs.is_empty() {
        return "No eval runs yet: run `tracer eval FILE`.\n".to_string();
    }
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.label.clone().unwrap_or_default(),
                utc_time(r.started_unix_ns),
                format!("{}/{}", r.passed, r.total),
                r.state.clone(),
                r.file.clone(),
            ]
        })
        .collect();
    table(
        &["RUN", "LABEL", "STARTED (UTC)", "PASSED", "STATE", "FILE"],
        &rows,
    )
}

pub fn list_json(runs: &[EvalRunRow]) -> Value {
    Value::Array(
        runs.iter()
            .map(|r| {
                json!({
                    "run": r.id, "label": r.label, "file": r.file, "agent": r.agent,
                    "agent_api": r.agent_api, "runs_per_question": r.runs_per_question,
                    "started_unix_ns": r.started_unix_ns, "ended_unix_ns": r.ended_unix_ns,
                    "state": r.state, "passed": r.passed, "total": r.total,
                })
            })
            .collect(),
    )
}

/// `2026-11-30 12:47` (UTC) from nanoseconds since the epoch.
pub fn utc_time(unix_ns: i64) -> String {
    let rest = unix_ns.div_euclid(1_000_000_000).rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}",
        tracer_trace::read::dates::utc_date(unix_ns),
        rest / 3600,
        rest / 60 % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_error_is_printed_whole_under_the_table() {
        let said = "the agent failed: HTTP 502: model ollama (http://127.0.0.1:11435/api/chat) \
                    failed: answered 422 Unprocessable Entity: no recorded POST /api/chat carries \
                    this request (message 1 (user): got \"Put eggs on my shopping list\")";
        let attempt = Attempt {
            pass: false,
            reasons: vec![Reason::new("agent_error", said)],
            trace: Some("505dd8e4".repeat(4)),
            calls: Vec::new(),
            reply: None,
            cost: None,
        };
        let outcome = EvalOutcome {
            run: 1,
            label: None,
            state: "complete".into(),
            total: 1,
            questions: vec![QuestionResult::new("add-eggs".into(), vec![attempt])],
        };
        let text = render_run(&outcome);
        assert!(
            text.contains("agent_error: the agent failed: HTTP 502"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "agent errors, as the agent said them:\n  add-eggs: {said}\n"
            )),
            "{text}"
        );
    }

    #[test]
    fn utc_time_reads_the_calendar() {
        assert_eq!(super::utc_time(0), "1970-01-01 00:00");
        assert_eq!(
            super::utc_time(1_796_042_849_000_000_000),
            "2026-11-30 12:47"
        );
    }
}
