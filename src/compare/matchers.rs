//! Argument matchers of a question set: a plain value, `contains`, `regex`, `any_of`, `absent`.

use regex::Regex;
use serde_json::Value;

/// What one named argument must be.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Equal as JSON; strings compared trimmed and case-insensitively.
    Equals(Value),
    /// A string containing this text (case-insensitively).
    Contains(String),
    Regex(Regex),
    AnyOf(Vec<Matcher>),
    /// `{ absent = true }`: the argument must not be given (`false`: it must be).
    Absent(bool),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MatcherError {
    #[error("bad regex {pattern:?}: {message}")]
    Regex { pattern: String, message: String },
    #[error("{0}")]
    Shape(String),
}

impl Matcher {
    /// Reads a matcher from its TOML value (already turned into JSON).
    pub fn parse(value: &Value) -> Result<Matcher, MatcherError> {
        let Value::Object(map) = value else {
            return Ok(Matcher::Equals(value.clone()));
        };
        if map.len() != 1 {
            return Ok(Matcher::Equals(value.clone()));
        }
        let (key, inner) = map.iter().next().ok_or_else(|| shape("an empty table"))?;
        match key.as_str() {
            "contains" => inner
                .as_str()
                .map(|s| Matcher::Contains(s.to_string()))
                .ok_or_else(|| shape("`contains` takes a string")),
            "regex" => {
                let pattern = inner
                    .as_str()
                    .ok_or_else(|| shape("`regex` takes a string"))?;
                Regex::new(pattern)
                    .map(Matcher::Regex)
                    .map_err(|e| MatcherError::Regex {
                        pattern: pattern.to_string(),
                        message: e.to_string(),
                    })
            }
            "any_of" => inner
                .as_array()
                .ok_or_else(|| shape("`any_of` takes a list"))?
                .iter()
                .map(Matcher::parse)
                .collect::<Result<Vec<_>, _>>()
                .map(Matcher::AnyOf),
            "absent" => inner
                .as_bool()
                .map(Matcher::Absent)
                .ok_or_else(|| shape("`absent` takes true or false")),
            _ => Ok(Matcher::Equals(value.clone())),
        }
    }

    /// Whether `got` (None: the argument was not given) satisfies this matcher.
    pub fn matches(&self, got: Option<&Value>) -> bool {
        match (self, got) {
            (Matcher::Absent(absent), got) => *absent == got.is_none_or(Value::is_null),
            (_, None) => false,
            (Matcher::Equals(expected), Some(got)) => equal(expected, got),
            (Matcher::Contains(part), Some(Value::String(text))) => {
                text.to_lowercase().contains(&part.to_lowercase())
            }
            (Matcher::Regex(regex), Some(Value::String(text))) => regex.is_match(text),
            (Matcher::AnyOf(options), got) => options.iter().any(|m| m.matches(got)),
            _ => false,
        }
    }

    /// How the expectation reads in a reason: `contains "milk"`, `"buy milk"`.
    pub fn describe(&self) -> String {
        match self {
            Matcher::Equals(value) => value.to_string(),
            Matcher::Contains(part) => format!("contains {part:?}"),
            Matcher::Regex(regex) => format!("matches /{}/", regex.as_str()),
            Matcher::AnyOf(options) => format!(
                "any of [{}]",
                options
                    .iter()
                    .map(Matcher::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Matcher::Absent(true) => "absent".to_string(),
            Matcher::Absent(false) => "present".to_string(),
        }
    }
}

fn shape(message: &str) -> MatcherError {
    MatcherError::Shape(message.to_string())
}

/// JSON equality where strings compare trimmed and case-insensitively, at any depth.
fn equal(expected: &Value, got: &Value) -> bool {
    match (expected, got) {
        (Value::String(a), Value::String(b)) => a.trim().to_lowercase() == b.trim().to_lowercase(),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => expected == got,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(value: Value) -> Matcher {
        Matcher::parse(&value).unwrap()
    }

    #[test]
    fn each_matcher_accepts_and_refuses() {
        assert!(m(json!("Buy Milk ")).matches(Some(&json!("buy milk"))));
        assert!(!m(json!("buy milk")).matches(Some(&json!("buy eggs"))));
        assert!(m(json!({"contains": "MILK"})).matches(Some(&json!("buy milk"))));
        assert!(!m(json!({"contains": "milk"})).matches(Some(&json!(3))));
        assert!(m(json!({"regex": "^buy (milk|eggs)$"})).matches(Some(&json!("buy eggs"))));
        assert!(m(json!({"any_of": ["milk", {"contains": "egg"}]})).matches(Some(&json!("eggs"))));
        assert!(m(json!({"absent": true})).matches(None));
        assert!(!m(json!({"absent": true})).matches(Some(&json!("x"))));
        assert!(!m(json!("x")).matches(None));
        assert!(m(json!({"a": 1, "b": 2})).matches(Some(&json!({"b": 2, "a": 1}))));
    }

    #[test]
    fn a_bad_regex_is_an_error_naming_it() {
        let error = Matcher::parse(&json!({"regex": "("})).unwrap_err();
        assert!(error.to_string().contains("\"(\""), "{error}");
    }
}
