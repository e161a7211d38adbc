//! Claude Code: its MCP servers from `~/.claude.json` (user scope, and the project's local scope
//! under `projects`), the project's approved `.mcp.json` and the run's own `--mcp-config`; the
//! override is one `--mcp-config` file in tracer's scratch directory with `--strict-mcp-config`,
//! so that Claude Code reads exactly that list (stdio servers behind `tracer wrap`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{AgentContext, AgentError, Override, read_json, servers_under, urls_in, write_scratch};

/// Subcommands that run no agent: their arguments are left alone.
const NOT_AN_AGENT_RUN: &[&str] = &[
    "mcp",
    "config",
    "doctor",
    "update",
    "upgrade",
    "install",
    "migrate-installer",
    "setup-token",
    "plugin",
    "auth",
];

pub fn prepare(args: &[String], context: &AgentContext) -> Result<Override, AgentError> {
    if let Some(first) = args.first()
        && NOT_AN_AGENT_RUN.contains(&first.as_str())
    {
        return Err(AgentError::Unsupported(format!(
            "`claude {first}` starts no agent session"
        )));
    }
    let config_dir = context
        .var("CLAUDE_CONFIG_DIR")
        .map_or_else(|| context.home.clone(), Into::into);
    let state_path = config_dir.join(".claude.json");
    let settings_dir = context
        .var("CLAUDE_CONFIG_DIR")
        .map_or_else(|| context.home.join(".claude"), Into::into);
    let (given, strict, rest) = split_mcp_flags(args);
    let mut servers: BTreeMap<String, Value> = BTreeMap::new();
    if !strict {
        let state = read_json(&state_path)?.unwrap_or(Value::Null);
        servers.extend(servers_under(&state, "mcpServers"));
        let cwd = context.cwd.display().to_string();
        let project_state = state.get("projects").and_then(|p| p.get(&cwd));
        let mut approval = Vec::new();
        for path in [
            settings_dir.join("settings.json"),
            context.cwd.join(".claude/settings.json"),
            context.cwd.join(".claude/settings.local.json"),
        ] {
            approval.extend(read_json(&path)?);
        }
        approval.extend(project_state.cloned());
        if let Some(project) = read_json(&context.cwd.join(".mcp.json"))? {
            for (name, entry) in servers_under(&project, "mcpServers") {
                if approved(&approval, &name) {
                    servers.insert(name, entry);
                }
            }
        }
        if let Some(local) = project_state {
            servers.extend(servers_under(local, "mcpServers"));
        }
    }
    for config in &given {
        let value = if config.trim_start().starts_with('{') {
            serde_json::from_str(config).map_err(|e| AgentError::Parse {
                path: "--mcp-config".into(),
                message: e.to_string(),
            })?
        } else {
            let path = context.cwd.join(config);
            read_json(&path)?.ok_or_else(|| AgentError::Read {
                path: path.display().to_string(),
                source: std::io::ErrorKind::NotFound.into(),
            })?
        };
        servers.extend(servers_under(&value, "mcpServers"));
    }
    let mut out = Override {
        how: "--mcp-config with --strict-mcp-config".into(),
        ..Override::default()
    };
    for (name, entry) in servers.iter_mut() {
        urls_in(entry, &mut out.urls);
        let stdio = matches!(
            entry.get("type").and_then(Value::as_str),
            None | Some("stdio")
        );
        let Some(command) = entry.get("command").and_then(Value::as_str) else {
            continue;
        };
        if !stdio {
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
        entry["command"] = json!(context.wrap.program());
        entry["args"] = json!(wrapped);
        out.wrapped.push(name.clone());
    }
    if out.wrapped.is_empty() {
        // Nothing to wrap: the run's arguments stay as they were (plugins' servers too).
        out.args = args.to_vec();
        return Ok(out);
    }
    let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers }))
        .map_err(|e| AgentError::Unsupported(e.to_string()))?;
    let file = write_scratch(context.scratch, "claude-mcp.json", &text)?;
    out.args = vec![
        "--mcp-config".into(),
        file.display().to_string(),
        "--strict-mcp-config".into(),
    ];
    out.args.extend(rest);
    Ok(out)
}

/// Whether a `.mcp.json` server is approved in a settings file or the project's state
/// (`enableAllProjectMcpServers`, `enabledMcpjsonServers`; `disabledMcpjsonServers` wins).
fn approved(settings: &[Value], name: &str) -> bool {
    let listed = |key: &str| {
        settings.iter().any(|s| {
            s.get(key)
                .and_then(Value::as_array)
                .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
        })
    };
    if listed("disabledMcpjsonServers") {
        return false;
    }
    listed("enabledMcpjsonServers")
        || settings
            .iter()
            .any(|s| s.get("enableAllProjectMcpServers") == Some(&Value::Bool(true)))
}

/// The run's own `--mcp-config` values, whether `--strict-mcp-config` was given, and the other
/// arguments. `--mcp-config` takes every following argument up to the next option, as Claude
/// Code's parser does.
fn split_mcp_flags(args: &[String]) -> (Vec<String>, bool, Vec<String>) {
    let (mut given, mut strict, mut rest) = (Vec::new(), false, Vec::new());
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            rest.push(arg.clone());
            rest.extend(iter.by_ref().cloned());
            break;
        }
        if arg == "--strict-mcp-config" {
            strict = true;
        } else if let Some(value) = arg.strip_prefix("--mcp-config=") {
            given.push(value.to_string());
        } else if arg == "--mcp-config" {
            while let Some(value) = iter.next_if(|next| !next.starts_with('-')) {
                given.push(value.clone());
            }
        } else {
            rest.push(arg.clone());
        }
    }
    (given, strict, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_runs_own_mcp_configs_are_taken_out_of_the_arguments() {
        let args = strings(&[
            "-p",
            "hi",
            "--mcp-config",
            "a.json",
            "b.json",
            "--strict-mcp-config",
            "-v",
        ]);
        let (given, strict, rest) = split_mcp_flags(&args);
        assert_eq!(given, ["a.json", "b.json"]);
        assert!(strict);
        assert_eq!(rest, ["-p", "hi", "-v"]);
    }

    #[test]
    fn project_servers_need_an_approval() {
        let yes = [json!({"enabledMcpjsonServers": ["notes"]})];
        assert!(approved(&yes, "notes"));
        assert!(!approved(&yes, "other"));
        let all = [
            json!({"enableAllProjectMcpServers": true}),
            json!({"disabledMcpjsonServers": ["x"]}),
        ];
        assert!(approved(&all, "notes"));
        assert!(!approved(&all, "x"));
    }
}
