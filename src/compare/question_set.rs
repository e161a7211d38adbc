//! A question set in TOML (`[[question]]` tables): what to ask, which tool calls to expect with
//! argument matchers, tools that must not be called, and what the reply must contain.

use serde::Deserialize;
use serde_json::Value;

use super::matchers::{Matcher, MatcherError};

/// One expected tool call: its tool and matchers for the arguments it names.
#[derive(Debug, Clone)]
pub struct ExpectedCall {
    pub tool: String,
    pub args: Vec<(String, Matcher)>,
}

/// One question and how its answer is judged.
#[derive(Debug, Clone)]
pub struct Question {
    pub id: String,
    pub ask: String,
    /// None: calls are not judged; `Some([])`: no tool may be called.
    pub calls: Option<Vec<ExpectedCall>>,
    pub forbid: Vec<String>,
    /// Tools that may be called besides the expected ones (e.g. a `read` before an `update`).
    pub allow: Vec<String>,
    pub reply_contains: Option<String>,
    /// `order = "exact"`: the calls in this order, and nothing in between.
    pub order_exact: bool,
    /// `tool_errors = "allow"`: a tool answering an error does not fail the question.
    pub allow_tool_errors: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum QuestionSetError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Toml { path: String, message: String },
    #[error("{path}: question {id:?}: {message}")]
    Question {
        path: String,
        id: String,
        message: String,
    },
    #[error("{path}: no [[question]] tables")]
    Empty { path: String },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSet {
    #[serde(default)]
    question: Vec<RawQuestion>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuestion {
    id: String,
    ask: String,
    calls: Option<Vec<RawCall>>,
    #[serde(default)]
    forbid: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    reply_contains: Option<String>,
    order: Option<String>,
    tool_errors: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCall {
    tool: String,
    #[serde(default)]
    args: toml::Table,
}

/// Reads and checks a question set file.
pub fn load(path: &str) -> Result<Vec<Question>, QuestionSetError> {
    let text = std::fs::read_to_string(path).map_err(|source| QuestionSetError::Read {
        path: path.to_string(),
        source,
    })?;
    parse(path, &text)
}

/// Parses a question set; `path` names it in errors.
pub fn parse(path: &str, text: &str) -> Result<Vec<Question>, QuestionSetError> {
    let raw: RawSet = toml::from_str(text).map_err(|e| QuestionSetError::Toml {
        path: path.to_string(),
        message: e.to_string(),
    })?;
    if raw.question.is_empty() {
        return Err(QuestionSetError::Empty {
            path: path.to_string(),
        });
    }
    let mut questions: Vec<Question> = Vec::new();
    for q in raw.question {
        let bad = |message: String| QuestionSetError::Question {
            path: path.to_string(),
            id: q.id.clone(),
            message,
        };
        if q.id.trim().is_empty() {
            return Err(bad("the id is empty".into()));
        }
        if questions.iter().any(|seen| seen.id == q.id) {
            return Err(bad("the id is used twice".into()));
        }
        if q.ask.trim().is_empty() {
            return Err(bad("`ask` is empty".into()));
        }
        let order_exact = match q.order.as_deref() {
            None | Some("any") => false,
            Some("exact") => true,
            Some(other) => return Err(bad(format!("order {other:?} is not \"exact\" or \"any\""))),
        };
        let allow_tool_errors = match q.tool_errors.as_deref() {
            None | Some("fail") => false,
            Some("allow") => true,
            Some(other) => {
                return Err(bad(format!(
                    "tool_errors {other:?} is not \"fail\" or \"allow\""
                )));
            }
        };
        let calls = match &q.calls {
            None => None,
            Some(raw_calls) => Some(
                raw_calls
                    .iter()
                    .map(expected_call)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| bad(e.to_string()))?,
            ),
        };
        questions.push(Question {
            id: q.id.clone(),
            ask: q.ask.clone(),
            calls,
            forbid: q.forbid.clone(),
            allow: q.allow.clone(),
            reply_contains: q.reply_contains.clone(),
            order_exact,
            allow_tool_errors,
        });
    }
    Ok(questions)
}

fn expected_call(raw: &RawCall) -> Result<ExpectedCall, MatcherError> {
    let mut args = Vec::new();
    for (name, value) in &raw.args {
        let json: Value = serde_json::to_value(value)
            .map_err(|e| MatcherError::Shape(format!("argument {name}: {e}")))?;
        let matcher = Matcher::parse(&json).map_err(|e| match e {
            MatcherError::Shape(m) => MatcherError::Shape(format!("argument {name}: {m}")),
            other => other,
        })?;
        args.push((name.clone(), matcher));
    }
    Ok(ExpectedCall {
        tool: raw.tool.clone(),
        args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_parses() {
        let text = r#"
[[question]]
id = "add-milk"
ask = "Add buy milk to my notes"
calls = [{ tool = "append", args = { content = { contains = "milk" } } }]
forbid = ["write", "clear"]
reply_contains = "milk"
"#;
        let set = parse("t.toml", text).unwrap();
        assert_eq!(set[0].id, "add-milk");
        assert_eq!(set[0].calls.as_ref().unwrap()[0].args[0].0, "content");
        assert_eq!(set[0].forbid, ["write", "clear"]);
    }

    #[test]
    fn the_shipped_notes_set_covers_every_tool_and_the_traps() {
        let text = include_str!("../../examples/evals/notes.toml");
        let set = parse("examples/evals/notes.toml", text).unwrap();
        assert!(set.len() >= 20, "{} questions", set.len());
        for tool in ["read", "write", "append", "update", "clear"] {
            let expected = set
                .iter()
                .flat_map(|q| q.calls.iter().flatten())
                .any(|c| c.tool == tool);
            assert!(expected, "no question expects {tool}");
        }
        for trap in [
            "write-down-trap",
            "update-missing-trap",
            "forget-everything",
        ] {
            assert!(set.iter().any(|q| q.id == trap), "{trap}");
        }
    }

    #[test]
    fn mistakes_are_named() {
        let twice = "[[question]]\nid='a'\nask='x'\n[[question]]\nid='a'\nask='y'\n";
        assert!(
            parse("t", twice)
                .unwrap_err()
                .to_string()
                .contains("used twice")
        );
        let typo = "[[question]]\nid='a'\nask='x'\nfrobid=['write']\n";
        assert!(parse("t", typo).unwrap_err().to_string().contains("frobid"));
        let order = "[[question]]\nid='a'\nask='x'\norder='strict'\n";
        assert!(
            parse("t", order)
                .unwrap_err()
                .to_string()
                .contains("strict")
        );
        assert!(
            parse("t", "")
                .unwrap_err()
                .to_string()
                .contains("no [[question]]")
        );
    }
}
