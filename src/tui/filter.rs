//! The `/` filter: plain words match a trace's title or id; `tool:`, `model:`, `method:`,
//! `status:` and `role:` tokens match its facts; `body:` and the rest of the line is searched for
//! in every message and body (`tracer_live::search`, run when the filter is applied). Every term must
//! match (case-insensitive, by substring).

use super::facts::TraceFacts;
use tracer_store::traces::TraceRow;

/// Which of a trace's values a term is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Text,
    Tool,
    Model,
    Method,
    Status,
    Role,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub field: Field,
    pub value: String,
}

/// A parsed filter; the empty filter matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filter {
    pub text: String,
    pub terms: Vec<Term>,
    /// `body:` and what follows it: searched for in titles, messages and bodies.
    pub body: Option<String>,
}

/// Whether a trace matches, or cannot be told until its facts are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Yes,
    No,
    NeedsFacts,
}

impl Filter {
    pub fn parse(text: &str) -> Self {
        let (words, body) = split_body(text);
        let terms = words
            .split_whitespace()
            .map(|word| {
                let lower = word.to_lowercase();
                let fields = [
                    ("tool:", Field::Tool),
                    ("model:", Field::Model),
                    ("method:", Field::Method),
                    ("status:", Field::Status),
                    ("role:", Field::Role),
                ];
                fields
                    .iter()
                    .find_map(|(prefix, field)| {
                        lower.strip_prefix(prefix).map(|value| Term {
                            field: *field,
                            value: value.to_string(),
                        })
                    })
                    .unwrap_or(Term {
                        field: Field::Text,
                        value: lower,
                    })
            })
            .collect();
        Filter {
            text: text.trim().to_string(),
            terms,
            body,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.body.is_none()
    }

    /// Whether the filter needs facts (tokens) rather than just the trace row.
    pub fn needs_facts(&self) -> bool {
        self.terms.iter().any(|t| t.field != Field::Text)
    }

    pub fn matches(&self, row: &TraceRow, facts: Option<&TraceFacts>) -> Verdict {
        let mut needs_facts = false;
        for term in &self.terms {
            let hit = match (term.field, facts) {
                (Field::Text, facts) => {
                    let title = row.title.as_deref().unwrap_or_default().to_lowercase();
                    title.contains(&term.value)
                        || row.id.starts_with(&term.value)
                        || facts.is_some_and(|f| contains(&f.tools(), &term.value))
                }
                (_, None) => {
                    needs_facts = true;
                    continue;
                }
                (Field::Tool, Some(f)) => contains(&f.tools(), &term.value),
                (Field::Model, Some(f)) => contains(&f.models, &term.value),
                (Field::Method, Some(f)) => contains(&f.methods, &term.value),
                (Field::Status, Some(f)) => contains(&f.statuses, &term.value),
                (Field::Role, Some(f)) => contains(&f.roles, &term.value),
            };
            if !hit {
                return Verdict::No;
            }
        }
        if needs_facts {
            Verdict::NeedsFacts
        } else {
            Verdict::Yes
        }
    }
}

/// The words before `body:`, and the text after it (None when absent or empty).
fn split_body(text: &str) -> (&str, Option<String>) {
    let at = text.char_indices().map(|(at, _)| at).find(|&at| {
        text.get(at..at + 5)
            .is_some_and(|word| word.eq_ignore_ascii_case("body:"))
            && (at == 0 || text[..at].ends_with(char::is_whitespace))
    });
    match at {
        Some(at) => {
            let body = text[at + 5..].trim();
            (&text[..at], (!body.is_empty()).then(|| body.to_string()))
        }
        None => (text, None),
    }
}

fn contains(values: &[String], needle: &str) -> bool {
    values.iter().any(|v| v.to_lowercase().contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracer_trace::{TraceStatus, TraceSummary};

    fn row(title: &str) -> TraceRow {
        TraceRow {
            id: "abc123".into(),
            title: Some(title.into()),
            kind: "request".into(),
            started_unix_ns: 0,
            ended_unix_ns: None,
            created_by: "correlate".into(),
        }
    }

    fn facts() -> TraceFacts {
        TraceFacts {
            summary: TraceSummary {
                title: None,
                hops: 1,
                messages: 2,
                started_ns: None,
                duration_ns: None,
                status: TraceStatus::ToolError,
                side_calls_failed: 0,
                tools_used: vec!["append".into()],
                host_tools_used: vec!["Bash".into()],
                tokens: Default::default(),
                cost: Default::default(),
                last_prompt: None,
            },
            roles: vec!["mcp".into(), "notes".into()],
            methods: vec!["post".into(), "tools/call".into()],
            models: vec!["qwen2.5:7b".into()],
            statuses: vec!["tool error".into(), "200".into(), "error".into()],
        }
    }

    #[test]
    fn words_and_tokens() {
        let filter = Filter::parse("Milk tool:APP status:error");
        assert_eq!(filter.terms.len(), 3);
        assert_eq!(filter.terms[1].field, Field::Tool);
        let facts = facts();
        assert_eq!(
            filter.matches(&row("Add buy milk"), Some(&facts)),
            Verdict::Yes
        );
        assert_eq!(
            filter.matches(&row("Add buy milk"), None),
            Verdict::NeedsFacts
        );
        assert_eq!(filter.matches(&row("Add eggs"), None), Verdict::No);
        let role = Filter::parse("role:model");
        assert_eq!(role.matches(&row("x"), Some(&facts)), Verdict::No);
        assert_eq!(
            Filter::parse("model:qwen method:tools/call").matches(&row("x"), Some(&facts)),
            Verdict::Yes
        );
        assert_eq!(
            Filter::parse("abc").matches(&row("x"), None),
            Verdict::Yes,
            "id prefix"
        );
        assert!(Filter::parse("  ").is_empty());
        // The host's own tools are tools too.
        assert_eq!(
            Filter::parse("tool:bash").matches(&row("x"), Some(&facts)),
            Verdict::Yes
        );
    }

    #[test]
    fn body_takes_the_rest_of_the_line() {
        let filter = Filter::parse("status:ok Body:Appended buy milk ");
        assert_eq!(filter.body.as_deref(), Some("Appended buy milk"));
        assert_eq!(filter.terms.len(), 1);
        assert!(!filter.is_empty());
        assert_eq!(Filter::parse("body:").body, None);
        assert_eq!(Filter::parse("nobody:x").body, None);
    }
}
