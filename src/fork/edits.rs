//! The edits a fork makes: to message N's body (`--set`, `--body`, `--edit`), to every model
//! request from N on (`--model`, `--tool-description`), and to what a tool returns at N
//! (`--result`, `--error`).

use serde_json::{Map, Value, json};

use crate::compare::step_edits::{self, EditError, SetEdit};

/// What a tool call at N returns instead of running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReturn {
    pub text: String,
    pub is_error: bool,
}

/// Every edit `tracer fork` was given (`--edit` already turned into `body`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForkEdits {
    pub sets: Vec<SetEdit>,
    pub body: Option<Map<String, Value>>,
    pub model: Option<String>,
    pub tool_descriptions: Vec<(String, String)>,
    pub tool_return: Option<ToolReturn>,
    /// The live part's upstream (a base URL), for the route of message N.
    pub upstream: Option<String>,
}

impl ForkEdits {
    /// True when message N's own body is edited (`--set`, `--body`, `--edit`).
    pub fn edits_body(&self) -> bool {
        !self.sets.is_empty() || self.body.is_some()
    }

    /// True when nothing at all is changed (a fork that only replays, then goes live).
    pub fn is_empty(&self) -> bool {
        *self == ForkEdits::default()
    }

    /// The edits as stored with the fork and shown by `show`.
    pub fn to_json(&self) -> Value {
        let mut out = Vec::new();
        if let Some(body) = &self.body {
            out.push(json!({"kind": "body", "body": body}));
        }
        for set in &self.sets {
            out.push(json!({"kind": "set", "pointer": set.pointer, "value": set.value}));
        }
        if let Some(model) = &self.model {
            out.push(json!({"kind": "model", "model": model}));
        }
        for (name, text) in &self.tool_descriptions {
            out.push(json!({"kind": "tool-description", "tool": name, "description": text}));
        }
        if let Some(tool) = &self.tool_return {
            let kind = if tool.is_error { "error" } else { "result" };
            out.push(json!({"kind": kind, "text": tool.text}));
        }
        if let Some(upstream) = &self.upstream {
            let shown = tracer_wire::redact::redact_userinfo(upstream);
            out.push(json!({"kind": "upstream", "upstream": shown}));
        }
        Value::Array(out)
    }

    /// One line naming the edits (`show`, the fork's title).
    pub fn words(&self) -> String {
        words_of(&self.to_json())
    }

    /// Message N's body (request or answer) with `--body` and `--set` applied.
    pub fn body_at(&self, recorded: &[u8]) -> Result<Vec<u8>, EditError> {
        let mut body = match &self.body {
            Some(body) => body.clone(),
            None => object(recorded)?,
        };
        step_edits::apply(&mut body, &self.sets)?;
        Ok(serde_json::to_vec(&Value::Object(body)).unwrap_or_default())
    }

    /// A model request from N on with `--model` and `--tool-description` applied; None when
    /// neither changes it.
    pub fn model_request(&self, body: &[u8]) -> Option<Vec<u8>> {
        if self.model.is_none() && self.tool_descriptions.is_empty() {
            return None;
        }
        let mut value: Value = serde_json::from_slice(body).ok()?;
        let mut changed = false;
        if let (Some(model), Some(object)) = (&self.model, value.as_object_mut())
            && object.contains_key("model")
        {
            object.insert("model".into(), Value::String(model.clone()));
            changed = true;
        }
        for (name, text) in &self.tool_descriptions {
            changed |= describe_tool(&mut value, name, text);
        }
        changed.then(|| serde_json::to_vec(&value).unwrap_or_default())
    }

    /// The JSON-RPC answer to a `tools/call` at N: `--result` or `--error`, with the request's id.
    pub fn tool_answer(&self, request_body: &[u8]) -> Option<Vec<u8>> {
        let tool = self.tool_return.as_ref()?;
        let id = serde_json::from_slice::<Value>(request_body)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(Value::Null);
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {
                "content": [{"type": "text", "text": tool.text}],
                "isError": tool.is_error,
            },
        });
        Some(serde_json::to_vec(&answer).unwrap_or_default())
    }
}

fn object(bytes: &[u8]) -> Result<Map<String, Value>, EditError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) | Err(_) => Err(EditError::NotObject {
            what: "the recorded body".into(),
            message: "--set edits a JSON object; give the whole body with --body FILE".into(),
        }),
    }
}

/// Sets the description of every tool named `name`, in each dialect's tool list: OpenAI and
/// Ollama (`tools[].function`), Anthropic and Responses (`tools[]`), Gemini
/// (`tools[].functionDeclarations[]`). True when one was found.
pub fn describe_tool(request: &mut Value, name: &str, text: &str) -> bool {
    let Some(tools) = request.get_mut("tools").and_then(Value::as_array_mut) else {
        return false;
    };
    let mut found = false;
    for tool in tools {
        let mut targets: Vec<&mut Value> = Vec::new();
        if tool.get("function").is_some_and(Value::is_object) {
            targets.extend(tool.get_mut("function"));
        } else if tool
            .get("functionDeclarations")
            .is_some_and(Value::is_array)
        {
            if let Some(list) = tool
                .get_mut("functionDeclarations")
                .and_then(Value::as_array_mut)
            {
                targets.extend(list.iter_mut());
            }
        } else {
            targets.push(tool);
        }
        for target in targets {
            if target.get("name").and_then(Value::as_str) == Some(name)
                && let Some(object) = target.as_object_mut()
            {
                object.insert("description".into(), Value::String(text.to_string()));
                found = true;
            }
        }
    }
    found
}

/// The edits (as stored) in one line.
pub fn words_of(edits: &Value) -> String {
    let parts: Vec<String> = (edits.as_array().into_iter().flatten())
        .map(|edit| {
            let text = |key: &str| edit[key].as_str().unwrap_or("").to_string();
            let short = |t: String| tracer_trace::words::shorten(&t, 60);
            match edit["kind"].as_str().unwrap_or("") {
                "body" => "the whole body replaced".to_string(),
                "set" => short(format!("{} = {}", text("pointer"), edit["value"])),
                "model" => format!("model {}", text("model")),
                "tool-description" => short(format!(
                    "{}'s description \"{}\"",
                    text("tool"),
                    text("description")
                )),
                "result" => short(format!("the tool returns \"{}\"", text("text"))),
                "error" => short(format!("the tool fails: \"{}\"", text("text"))),
                "upstream" => format!("live to {}", text("upstream")),
                other => other.to_string(),
            }
        })
        .collect();
    if parts.is_empty() {
        "no edit".into()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_descriptions_are_set_in_every_dialect() {
        let mut ollama = json!({"tools": [{"type": "function", "function": {"name": "write", "description": "a"}}]});
        assert!(describe_tool(&mut ollama, "write", "Add it"));
        assert_eq!(ollama["tools"][0]["function"]["description"], "Add it");
        let mut anthropic = json!({"tools": [{"name": "Bash", "description": "a"}]});
        assert!(describe_tool(&mut anthropic, "Bash", "b"));
        assert_eq!(anthropic["tools"][0]["description"], "b");
        let mut gemini =
            json!({"tools": [{"functionDeclarations": [{"name": "x"}, {"name": "y"}]}]});
        assert!(describe_tool(&mut gemini, "y", "c"));
        assert_eq!(
            gemini["tools"][0]["functionDeclarations"][1]["description"],
            "c"
        );
        assert!(!describe_tool(&mut gemini, "z", "c"));
    }

    #[test]
    fn requests_from_n_on_get_the_model_and_descriptions_and_n_its_sets() {
        let edits = ForkEdits {
            sets: vec!["/messages/0/content=\"Add eggs\"".parse().expect("set")],
            model: Some("m2".into()),
            tool_descriptions: vec![("append".into(), "Add a line".into())],
            ..ForkEdits::default()
        };
        let recorded = br#"{"model":"m1","messages":[{"role":"user","content":"Add buy milk"}],"tools":[{"function":{"name":"append","description":"old"}}]}"#;
        let at_n: Value =
            serde_json::from_slice(&edits.body_at(recorded).expect("edit")).expect("json");
        assert_eq!(at_n["messages"][0]["content"], "Add eggs");
        let later: Value =
            serde_json::from_slice(&edits.model_request(recorded).expect("changed")).expect("json");
        assert_eq!(later["model"], "m2");
        assert_eq!(later["tools"][0]["function"]["description"], "Add a line");
        assert!(ForkEdits::default().model_request(recorded).is_none());
        let words = edits.words();
        assert!(
            words.contains("/messages/0/content = \"Add eggs\"") && words.contains("model m2"),
            "{words}"
        );
    }

    #[test]
    fn a_tool_answer_carries_the_request_id_and_the_error_flag() {
        let edits = ForkEdits {
            tool_return: Some(ToolReturn {
                text: "disk full".into(),
                is_error: true,
            }),
            ..ForkEdits::default()
        };
        let answer: Value = serde_json::from_slice(
            &edits
                .tool_answer(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#)
                .expect("answer"),
        )
        .expect("json");
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["isError"], true);
        assert_eq!(answer["result"]["content"][0]["text"], "disk full");
    }
}
