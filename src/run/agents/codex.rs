//! Codex CLI: its MCP servers from `$CODEX_HOME/config.toml` (default `~/.codex`) and, in a
//! trusted project, each `.codex/config.toml` from the git root down to the working directory
//! (nearer wins); the override is `-c mcp_servers.NAME.command=…` and `…args=…` before the
//! subcommand, which Codex applies on top of every file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::Value;

use super::{AgentContext, AgentError, Override, project_dirs, read_optional};

/// Subcommands that run the agent (or none given: the interactive agent).
const AGENT_RUNS: &[&str] = &["exec", "e", "review", "resume", "fork"];

pub fn prepare(args: &[String], context: &AgentContext) -> Result<Override, AgentError> {
    if let Some(sub) = args.iter().find(|a| !a.starts_with('-'))
        && !AGENT_RUNS.contains(&sub.as_str())
        && is_subcommand(sub)
    {
        return Err(AgentError::Unsupported(format!(
            "`codex {sub}` starts no agent session"
        )));
    }
    let home = context
        .var("CODEX_HOME")
        .map_or_else(|| context.home.join(".codex"), PathBuf::from);
    let user = read_toml(&home.join("config.toml"))?.unwrap_or(Value::Table(Default::default()));
    let mut layers = vec![user.clone()];
    for dir in project_dirs(&context.cwd) {
        if trusted(&user, &dir) {
            layers.extend(read_toml(&dir.join(".codex/config.toml"))?);
        }
    }
    let mut servers: BTreeMap<String, toml::Table> = BTreeMap::new();
    let mut out = Override {
        how: "-c mcp_servers.NAME.command/args".into(),
        ..Override::default()
    };
    for layer in &layers {
        collect_urls(layer, &mut out.urls);
        if let Some(table) = layer.get("mcp_servers").and_then(Value::as_table) {
            for (name, entry) in table {
                if let Some(entry) = entry.as_table() {
                    let merged = servers.entry(name.clone()).or_default();
                    merged.extend(entry.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
        }
    }
    for (name, entry) in &servers {
        let Some(command) = entry.get("command").and_then(Value::as_str) else {
            continue;
        };
        // A dotted key cannot be named in `-c` without quoting Codex may not take.
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            out.skipped.push(name.clone());
            continue;
        }
        let original: Vec<String> = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let wrapped = context.wrap.args(name, command, &original);
        let program = Value::String(context.wrap.program());
        let wrapped = Value::Array(wrapped.into_iter().map(Value::String).collect());
        out.args.push("-c".into());
        out.args
            .push(format!("mcp_servers.{name}.command={program}"));
        out.args.push("-c".into());
        out.args.push(format!("mcp_servers.{name}.args={wrapped}"));
        out.wrapped.push(name.clone());
    }
    out.args.extend(args.iter().cloned());
    Ok(out)
}

/// Codex's other subcommands (its `--help` list).
fn is_subcommand(word: &str) -> bool {
    [
        "agents",
        "login",
        "logout",
        "mcp",
        "plugin",
        "app-server",
        "remote-control",
        "completion",
        "update",
        "doctor",
        "sandbox",
        "debug",
        "apply",
        "a",
        "queue",
        "archive",
        "delete",
        "migrate-rollouts",
        "migrate-nfs-db",
        "unarchive",
        "cloud",
        "exec-server",
        "features",
        "help",
        "mcp-server",
    ]
    .contains(&word)
}

/// Whether config.toml marks `dir` trusted (`[projects."DIR"] trust_level = "trusted"`).
fn trusted(user: &Value, dir: &Path) -> bool {
    user.get("projects")
        .and_then(|p| p.get(dir.display().to_string().as_str()))
        .and_then(|p| p.get("trust_level"))
        .and_then(Value::as_str)
        == Some("trusted")
}

/// Base URLs and MCP URLs of a config layer.
fn collect_urls(layer: &Value, out: &mut Vec<String>) {
    for key in ["openai_base_url", "chatgpt_base_url"] {
        if let Some(url) = layer.get(key).and_then(Value::as_str) {
            out.push(url.to_string());
        }
    }
    for (table, key) in [("model_providers", "base_url"), ("mcp_servers", "url")] {
        if let Some(entries) = layer.get(table).and_then(Value::as_table) {
            out.extend(
                entries
                    .values()
                    .filter_map(|e| e.get(key).and_then(Value::as_str))
                    .map(String::from),
            );
        }
    }
}

fn read_toml(path: &Path) -> Result<Option<Value>, AgentError> {
    let Some(text) = read_optional(path)? else {
        return Ok(None);
    };
    toml::from_str::<toml::Table>(&text)
        .map(|t| Some(Value::Table(t)))
        .map_err(|e| AgentError::Parse {
            path: path.display().to_string(),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trusted_project_is_named_by_its_path() {
        let user: Value =
            toml::from_str::<toml::Table>("[projects.\"/w/p\"]\ntrust_level = \"trusted\"\n")
                .map(Value::Table)
                .unwrap();
        assert!(trusted(&user, Path::new("/w/p")));
        assert!(!trusted(&user, Path::new("/w")));
    }
}
