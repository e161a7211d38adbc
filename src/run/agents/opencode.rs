//! opencode: its MCP servers (`mcp`, `"type": "local"` for stdio) from the global config
//! (`~/.config/opencode/`), `OPENCODE_CONFIG`, the project's `opencode.json(c)` and `.opencode/`
//! from the git root down, and `OPENCODE_CONFIG_CONTENT`, merged deeply in that order; the
//! override is `OPENCODE_CONFIG_CONTENT` (read last by opencode, arrays replaced, each source
//! checked on its own): the user's own content with each stdio server's entry, whole, its
//! `command` behind `tracer wrap`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{AgentContext, AgentError, Override, project_dirs, read_json, servers_under, urls_in};

const CONTENT: &str = "OPENCODE_CONFIG_CONTENT";

pub fn prepare(args: &[String], context: &AgentContext) -> Result<Override, AgentError> {
    let config_home = context
        .var("XDG_CONFIG_HOME")
        .map_or_else(|| context.home.join(".config"), PathBuf::from)
        .join("opencode");
    let mut files: Vec<PathBuf> = ["config.json", "opencode.json", "opencode.jsonc"]
        .iter()
        .map(|name| config_home.join(name))
        .collect();
    if let Some(custom) = context.var("OPENCODE_CONFIG") {
        files.push(context.cwd.join(custom));
    }
    let dirs = project_dirs(&context.cwd);
    if context.var("OPENCODE_DISABLE_PROJECT_CONFIG").is_none() {
        for dir in &dirs {
            files.push(dir.join("opencode.json"));
            files.push(dir.join("opencode.jsonc"));
        }
    }
    for dir in dirs
        .iter()
        .map(|d| d.join(".opencode"))
        .chain(context.var("OPENCODE_CONFIG_DIR").map(PathBuf::from))
    {
        files.push(dir.join("opencode.json"));
        files.push(dir.join("opencode.jsonc"));
    }
    let mut merged = json!({});
    for file in &files {
        if let Some(value) = read_json(file)? {
            merge_deep(&mut merged, value);
        }
    }
    let user_content = match context.var(CONTENT) {
        Some(text) => super::super::jsonc::parse(text).map_err(|e| AgentError::Parse {
            path: CONTENT.into(),
            message: e.to_string(),
        })?,
        None => json!({}),
    };
    merge_deep(&mut merged, user_content.clone());
    let mut out = Override {
        how: format!("{CONTENT} (merged over the user's)"),
        args: args.to_vec(),
        ..Override::default()
    };
    urls_in(
        merged.get("provider").unwrap_or(&Value::Null),
        &mut out.urls,
    );
    let servers: BTreeMap<String, Value> = servers_under(&merged, "mcp");
    let mut overrides = serde_json::Map::new();
    for (name, entry) in &servers {
        urls_in(entry, &mut out.urls);
        if entry.get("type").and_then(Value::as_str) != Some("local") {
            continue;
        }
        let Some(command) = entry.get("command").and_then(Value::as_array) else {
            continue;
        };
        let command: Vec<String> = command
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        let Some((program, rest)) = command.split_first() else {
            continue;
        };
        let mut wrapped = vec![context.wrap.program()];
        wrapped.extend(context.wrap.args(name, program, rest));
        // opencode checks each source on its own: the entry goes whole, its command replaced.
        let mut whole = entry.clone();
        whole["command"] = json!(wrapped);
        overrides.insert(name.clone(), whole);
        out.wrapped.push(name.clone());
    }
    if out.wrapped.is_empty() {
        return Ok(out);
    }
    let mut content = user_content;
    merge_deep(&mut content, json!({ "mcp": overrides }));
    out.env.push((CONTENT.into(), content.to_string()));
    Ok(out)
}

/// opencode's merge: objects merged key by key, anything else (arrays too) replaced.
fn merge_deep(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(target), Value::Object(source)) => {
            for (key, value) in source {
                match target.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge_deep(existing, value);
                    }
                    _ => {
                        target.insert(key, value);
                    }
                }
            }
        }
        (into, from) => *into = from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_merge_and_arrays_are_replaced() {
        let mut a = json!({"mcp": {"n": {"type": "local", "command": ["a", "b"], "environment": {"X": "1"}}}});
        merge_deep(&mut a, json!({"mcp": {"n": {"command": ["c"]}}}));
        assert_eq!(
            a,
            json!({"mcp": {"n": {"type": "local", "command": ["c"], "environment": {"X": "1"}}}})
        );
    }
}
