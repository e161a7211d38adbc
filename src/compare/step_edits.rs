//! Edits to one recorded request before it is sent again (`tracer rerun --step K`): the whole
//! body from a file (`--body`), values set by JSON Pointer (`--set /tools/2/function/description="…"`),
//! and the body opened in `$EDITOR` (`--edit`). The recorded request itself is never changed.

use std::path::Path;

use serde_json::{Map, Value};

/// Why an edit could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("--set takes POINTER=JSON (e.g. /model=\"gpt-4o\"), not `{0}`")]
    SetForm(String),
    #[error(
        "--set {pointer}: the value is not JSON ({message}); a string needs its quotes: {pointer}=\"text\""
    )]
    SetValue { pointer: String, message: String },
    #[error("--set {pointer}: {why}")]
    Pointer { pointer: String, why: String },
    #[error("reading {path}: {message}")]
    Read { path: String, message: String },
    #[error("{what} is not a JSON object ({message}); the request was not sent")]
    NotObject { what: String, message: String },
    #[error("the editor ({editor}) {why}; the request was not sent")]
    Editor { editor: String, why: String },
}

/// One `--set`: a JSON Pointer and the value it gets.
#[derive(Debug, Clone, PartialEq)]
pub struct SetEdit {
    pub pointer: String,
    pub value: Value,
}

impl std::str::FromStr for SetEdit {
    type Err = EditError;

    fn from_str(text: &str) -> Result<Self, EditError> {
        let (pointer, json) = text
            .split_once('=')
            .filter(|(p, _)| p.is_empty() || p.starts_with('/'))
            .ok_or_else(|| EditError::SetForm(text.to_string()))?;
        let value = serde_json::from_str(json).map_err(|e| EditError::SetValue {
            pointer: pointer.to_string(),
            message: e.to_string(),
        })?;
        Ok(SetEdit {
            pointer: pointer.to_string(),
            value,
        })
    }
}

/// Sets what `pointer` (RFC 6901) names to `value`: every step but the last must exist; the
/// last may add an object member, or append to an array (its length, or `-`).
pub fn set(root: &mut Value, pointer: &str, value: Value) -> Result<(), EditError> {
    let fail = |why: String| EditError::Pointer {
        pointer: pointer.to_string(),
        why,
    };
    if pointer.is_empty() {
        *root = value;
        return Ok(());
    }
    let tokens: Vec<String> = (pointer.split('/').skip(1))
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let (last, path) = tokens
        .split_last()
        .ok_or_else(|| fail("an empty pointer".into()))?;
    let mut at = root;
    for (depth, token) in path.iter().enumerate() {
        let here = || format!("/{}", tokens[..depth].join("/"));
        at = match at {
            Value::Object(map) => map
                .get_mut(token)
                .ok_or_else(|| fail(format!("{} has no member `{token}`", here())))?,
            Value::Array(items) => {
                let len = items.len();
                (token.parse::<usize>().ok())
                    .and_then(|i| items.get_mut(i))
                    .ok_or_else(|| {
                        fail(format!(
                            "{} has {len} items; there is no item `{token}`",
                            here()
                        ))
                    })?
            }
            _ => {
                return Err(fail(format!(
                    "{} is neither an object nor an array",
                    here()
                )));
            }
        };
    }
    match at {
        Value::Object(map) => {
            map.insert(last.clone(), value);
        }
        Value::Array(items) if last == "-" || last.parse::<usize>() == Ok(items.len()) => {
            items.push(value)
        }
        Value::Array(items) => {
            let len = items.len();
            let slot = (last.parse::<usize>().ok()).and_then(|i| items.get_mut(i));
            *slot.ok_or_else(|| {
                fail(format!(
                    "the array has {len} items; there is no item `{last}`"
                ))
            })? = value;
        }
        _ => return Err(fail("its parent is neither an object nor an array".into())),
    }
    Ok(())
}

/// The body a file holds (`--body FILE`).
pub fn body_from(path: &Path) -> Result<Map<String, Value>, EditError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| EditError::Read {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    object(&bytes, &shown)
}

fn object(bytes: &[u8], what: &str) -> Result<Map<String, Value>, EditError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(EditError::NotObject {
            what: what.to_string(),
            message: format!("it is {}", kind(&other)),
        }),
        Err(e) => Err(EditError::NotObject {
            what: what.to_string(),
            message: e.to_string(),
        }),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
        Value::Object(_) => "an object",
    }
}

/// Applies `--set` edits in order.
pub fn apply(body: &mut Map<String, Value>, edits: &[SetEdit]) -> Result<(), EditError> {
    let mut root = Value::Object(std::mem::take(body));
    let result = edits
        .iter()
        .try_for_each(|e| set(&mut root, &e.pointer, e.value.clone()));
    *body = match root {
        Value::Object(map) => map,
        other => {
            return Err(EditError::NotObject {
                what: "the edited body".into(),
                message: format!("it is {}", kind(&other)),
            });
        }
    };
    result
}

/// Opens the body, pretty-printed, in `$VISUAL`, `$EDITOR` or `vi`, and reads it back.
pub fn edit(body: &Map<String, Value>, scratch: &Path) -> Result<Map<String, Value>, EditError> {
    let editor = (std::env::var("VISUAL").ok())
        .or_else(|| std::env::var("EDITOR").ok())
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".into());
    let file = scratch.join("request.json");
    let failed = |why: String| EditError::Editor {
        editor: editor.clone(),
        why,
    };
    let text = serde_json::to_string_pretty(body).unwrap_or_default();
    std::fs::write(&file, text).map_err(|e| failed(format!("could not be given the body: {e}")))?;
    // The editor may carry its own arguments (`code --wait`): run through the shell.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&file)
        .status()
        .map_err(|e| failed(format!("did not start: {e}")))?;
    if !status.success() {
        return Err(failed(format!("exited with {status}")));
    }
    let bytes = std::fs::read(&file).map_err(|e| failed(format!("left no file: {e}")))?;
    object(&bytes, "the edited body")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_set_members_items_and_appends() {
        let mut body = json!({"model": "a", "tools": [{"function": {"description": "old"}}], "m/n": {"~k": 1}});
        set(&mut body, "/tools/0/function/description", json!("new")).expect("set");
        set(&mut body, "/model", json!("b")).expect("set");
        set(&mut body, "/tools/-", json!({"x": 1})).expect("append");
        set(&mut body, "/m~1n/~0k", json!(2)).expect("escaped");
        set(&mut body, "/temperature", json!(0)).expect("a new member");
        assert_eq!(body["tools"][0]["function"]["description"], "new");
        assert_eq!(body["model"], "b");
        assert_eq!(body["tools"][1]["x"], 1);
        assert_eq!(body["m/n"]["~k"], 2);
        assert_eq!(body["temperature"], 0);
        let missing = set(&mut body, "/tools/7/function", json!(1)).expect_err("no item 7");
        assert!(
            missing
                .to_string()
                .contains("/tools has 2 items; there is no item `7`"),
            "{missing}"
        );
        let deep = set(&mut body, "/nope/x", json!(1)).expect_err("no member");
        assert!(deep.to_string().contains("has no member `nope`"), "{deep}");
    }

    #[test]
    fn set_edits_are_read_from_the_command_line_with_clear_errors() {
        let edit: SetEdit = "/messages/0/content=\"Add eggs\"".parse().expect("parse");
        assert_eq!(edit.value, json!("Add eggs"));
        let bare = "/model=gpt-4o".parse::<SetEdit>().expect_err("not JSON");
        assert!(bare.to_string().contains("needs its quotes"), "{bare}");
        assert!("model=1".parse::<SetEdit>().is_err());
        let mut body = Map::new();
        body.insert("model".into(), json!("a"));
        apply(&mut body, &[edit]).expect_err("no messages");
        assert_eq!(body["model"], "a", "a failed edit leaves the body readable");
    }
}
