//! Tallying the tool calls of repeated runs: `append {"content":"buy milk"}` 4 of 5.

use serde::Serialize;
use serde_json::Value;

use super::steps::Call;

/// One distinct call and in how many runs it was made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TallyRow {
    /// None for runs in which no tool was called.
    pub name: Option<String>,
    pub arguments: Value,
    pub runs: usize,
}

/// Counts, per distinct call, the runs that made it (a run making it twice counts once).
pub fn tally(runs: &[Vec<Call>]) -> Vec<TallyRow> {
    let mut rows: Vec<TallyRow> = Vec::new();
    for calls in runs {
        if calls.is_empty() {
            bump(&mut rows, None, Value::Null);
        }
        let mut seen: Vec<&Call> = Vec::new();
        for call in calls {
            if seen.contains(&call) {
                continue;
            }
            seen.push(call);
            bump(&mut rows, Some(call.name.clone()), call.arguments.clone());
        }
    }
    rows.sort_by_key(|row| std::cmp::Reverse(row.runs));
    rows
}

fn bump(rows: &mut Vec<TallyRow>, name: Option<String>, arguments: Value) {
    match rows
        .iter_mut()
        .find(|r| r.name == name && r.arguments == arguments)
    {
        Some(row) => row.runs += 1,
        None => rows.push(TallyRow {
            name,
            arguments,
            runs: 1,
        }),
    }
}

/// The tally as indented lines: `  append {"content":"buy milk"}  4 of 5`.
pub fn render(rows: &[TallyRow], total: usize) -> String {
    let labels: Vec<String> = rows
        .iter()
        .map(|r| match &r.name {
            None => "(no tool call)".to_string(),
            Some(name) => Call {
                name: name.clone(),
                arguments: r.arguments.clone(),
            }
            .display(),
        })
        .collect();
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    rows.iter()
        .zip(labels)
        .map(|(row, label)| format!("  {label:<width$}  {} of {total}\n", row.runs))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, content: &str) -> Call {
        Call {
            name: name.into(),
            arguments: json!({ "content": content }),
        }
    }

    #[test]
    fn counts_runs_not_calls() {
        let runs = vec![
            vec![call("append", "buy milk")],
            vec![call("append", "buy milk"), call("append", "buy milk")],
            vec![call("write", "buy milk")],
            vec![],
        ];
        let rows = tally(&runs);
        assert_eq!(rows[0].runs, 2);
        assert_eq!(rows[0].name.as_deref(), Some("append"));
        let text = render(&rows, 4);
        assert!(
            text.contains("append {\"content\":\"buy milk\"}  2 of 4"),
            "{text}"
        );
        assert!(text.contains("(no tool call)"), "{text}");
    }
}
