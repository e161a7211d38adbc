//! An agent event's attributes as the sentences read them: text, numbers, yes/no, a duration,
//! the tool and what it was asked (from its input or parameters), a size in bytes.

use serde_json::{Map, Value};

use crate::words::{human_duration, shorten};

pub(crate) struct Attrs(pub(crate) Map<String, Value>);

impl Attrs {
    pub(crate) fn text(&self, names: &[&str]) -> Option<String> {
        names.iter().find_map(|n| match self.0.get(*n)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        })
    }

    pub(crate) fn number(&self, names: &[&str]) -> Option<f64> {
        names.iter().find_map(|n| match self.0.get(*n)? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        })
    }

    pub(crate) fn yes(&self, names: &[&str]) -> Option<bool> {
        names.iter().find_map(|n| match self.0.get(*n)? {
            Value::Bool(b) => Some(*b),
            Value::String(s) => match s.as_str() {
                "true" | "1" | "success" => Some(true),
                "false" | "0" | "failure" => Some(false),
                _ => None,
            },
            _ => None,
        })
    }

    /// An attribute, or the same key inside the JSON of `tool_parameters` (where Claude Code
    /// names an MCP tool's server).
    pub(crate) fn param(&self, name: &str) -> Option<String> {
        self.text(&[name]).or_else(|| {
            let Some(Value::String(json)) = self.0.get("tool_parameters") else {
                return None;
            };
            let value: Value = serde_json::from_str(json).ok()?;
            value.get(name)?.as_str().map(str::to_string)
        })
    }

    pub(crate) fn duration(&self) -> Option<String> {
        let ms = self.number(&["duration_ms", "duration"])?;
        Some(human_duration((ms * 1e6) as i64))
    }

    /// The tool and what it was asked, `Bash \`npm test\``.
    pub(crate) fn tool(&self) -> String {
        let name = self.text(&["tool_name", "function_name", "tool.name", "name"]);
        let name = name.unwrap_or_else(|| "a tool".into());
        let server = self.param("mcp_server_name");
        let mut out = match (server, self.param("mcp_tool_name")) {
            (Some(server), Some(tool)) => {
                format!("{} on {}", shorten(&tool, 40), shorten(&server, 40))
            }
            _ => shorten(&name, 40),
        };
        if let Some(what) = self.asked() {
            out.push_str(&format!(" `{}`", shorten(&what, 80)));
        }
        out
    }

    /// The command or path a tool was given, from its input or parameters.
    pub(crate) fn asked(&self) -> Option<String> {
        for field in [
            "tool_input",
            "tool_parameters",
            "function_args",
            "arguments",
        ] {
            let value = match self.0.get(field) {
                Some(Value::String(s)) => {
                    serde_json::from_str(s).unwrap_or(Value::String(s.clone()))
                }
                Some(other) => other.clone(),
                None => continue,
            };
            for key in [
                "command",
                "full_command",
                "bash_command",
                "cmd",
                "file_path",
                "path",
                "pattern",
                "url",
            ] {
                match value.get(key) {
                    Some(Value::String(s)) => return Some(s.clone()),
                    Some(Value::Array(parts)) => {
                        let words: Vec<_> = parts.iter().filter_map(Value::as_str).collect();
                        return Some(words.join(" "));
                    }
                    _ => {}
                }
            }
        }
        None
    }
}

/// A size in bytes for people (`5 B`, `1.3 KB`), as the request anatomy says sizes.
pub(crate) fn bytes_text(n: f64) -> String {
    crate::read::request_anatomy::human_bytes(n.max(0.0) as usize)
}
