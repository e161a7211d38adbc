//! Two eval runs compared question by question: what was fixed, what broke, what still fails,
//! and what each cost.

use serde_json::{Value, json};

use super::eval_report::{table, total_line};
use super::eval_run::{EvalOutcome, cost_json};
use tracer_trace::account::cost::{CostSum, dollars};

/// One question in two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub id: String,
    pub a: Option<bool>,
    pub b: Option<bool>,
}

impl Change {
    /// `fixed` (fail → pass), `broken` (pass → fail), `same`, or `only in A` / `only in B`.
    pub fn word(&self) -> &'static str {
        match (self.a, self.b) {
            (Some(false), Some(true)) => "fixed",
            (Some(true), Some(false)) => "broken",
            (Some(_), Some(_)) => "same",
            (Some(_), None) => "only in A",
            _ => "only in B",
        }
    }
}

/// Every question of either run, in A's order then B's new ones.
pub fn changes(a: &EvalOutcome, b: &EvalOutcome) -> Vec<Change> {
    let mut out: Vec<Change> = a
        .questions
        .iter()
        .map(|q| Change {
            id: q.id.clone(),
            a: Some(q.passed),
            b: b.questions.iter().find(|r| r.id == q.id).map(|r| r.passed),
        })
        .collect();
    for q in &b.questions {
        if !out.iter().any(|c| c.id == q.id) {
            out.push(Change {
                id: q.id.clone(),
                a: None,
                b: Some(q.passed),
            });
        }
    }
    out
}

fn verdict(passed: Option<bool>) -> &'static str {
    match passed {
        Some(true) => "pass",
        Some(false) => "fail",
        None => "-",
    }
}

/// `tracer eval --compare A B` as text: what changed and what still fails (questions that pass
/// in both are counted, not listed), then both totals.
pub fn render_compare(a: &EvalOutcome, b: &EvalOutcome) -> String {
    let all = changes(a, b);
    let count = |word: &str| all.iter().filter(|c| c.word() == word).count();
    let passing = all
        .iter()
        .filter(|c| c.a == Some(true) && c.b == Some(true))
        .count();
    let mut shown: Vec<&Change> = all
        .iter()
        .filter(|c| !(c.a == Some(true) && c.b == Some(true)))
        .collect();
    shown.sort_by_key(|c| c.word() == "same");
    let mut out = format!(
        "{} fixed, {} broken, {} still failing, {passing} passing in both\n",
        count("fixed"),
        count("broken"),
        all.iter()
            .filter(|c| c.a == Some(false) && c.b == Some(false))
            .count()
    );
    if !shown.is_empty() {
        let rows: Vec<Vec<String>> = shown
            .iter()
            .map(|c| {
                let word = match c.word() {
                    "same" => "still failing",
                    other => other,
                };
                vec![
                    c.id.clone(),
                    verdict(c.a).to_string(),
                    verdict(c.b).to_string(),
                    word.to_string(),
                ]
            })
            .collect();
        out.push('\n');
        out.push_str(&table(&["QUESTION", "A", "B", "CHANGE"], &rows));
    }
    out.push_str(&format!("\nA: {}\nB: {}\n", total_line(a), total_line(b)));
    out.push_str(&cost_compare_line(a, b));
    out
}

/// `cost: A ≈ $0.41, B ≈ $0.29 (-$0.12, -29%)`; the change is left out when either side has an
/// unpriced call (a difference of two "at least" sums says nothing), and the line when neither
/// run recorded a model call.
fn cost_compare_line(a: &EvalOutcome, b: &EvalOutcome) -> String {
    let (a, b) = (a.cost(), b.cost());
    if a.is_empty() && b.is_empty() {
        return String::new();
    }
    let side = |cost: &CostSum| cost.short().unwrap_or_else(|| "no model call".to_string());
    let change = match cost_change(&a, &b) {
        Some((delta, percent)) => {
            let sign = if delta < 0.0 { "-" } else { "+" };
            let percent = percent.map_or(String::new(), |p| format!(", {p:+.0}%"));
            format!(" ({sign}{}{percent})", dollars(delta.abs()))
        }
        None => String::new(),
    };
    format!(
        "cost: A {}, B {}{change} ({})\n",
        side(&a),
        side(&b),
        tracer_trace::account::cost::estimate_label()
    )
}

/// B's cost less A's, and as a share of A's, when both are exact sums.
fn cost_change(a: &CostSum, b: &CostSum) -> Option<(f64, Option<f64>)> {
    if a.is_empty() || b.is_empty() || !a.is_exact() || !b.is_exact() {
        return None;
    }
    let delta = b.usd - a.usd;
    Some((delta, (a.usd > 0.0).then(|| delta / a.usd * 100.0)))
}

pub fn compare_json(a: &EvalOutcome, b: &EvalOutcome) -> Value {
    let side = |o: &EvalOutcome| json!({"run": o.run, "label": o.label, "state": o.state, "passed": o.passed(), "total": o.total, "cost": cost_json(&o.cost())});
    json!({
        "a": side(a),
        "b": side(b),
        "cost_change_usd": cost_change(&a.cost(), &b.cost()).map(|(delta, _)| delta),
        "prices": tracer_trace::account::cost::estimate_label(),
        "questions": changes(a, b).iter().map(|c| json!({
            "id": c.id, "a": c.a, "b": c.b, "change": c.word(),
        })).collect::<Vec<_>>(),
    })
}
