//! Gemini CLI and Qwen Code (its fork): MCP servers from the system defaults, the user's and the
//! (trusted) workspace's `settings.json` and the system settings, merged by server name with the
//! system file last; the override is a system settings file of tracer's own (the user's system
//! file's content with each stdio server behind `tracer wrap`), named by the agent's
//! `…_SYSTEM_SETTINGS_PATH` variable, the system defaults kept where they were.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{AgentContext, AgentError, Override, read_json, servers_under, urls_in, write_scratch};

/// Where one of the two agents keeps its settings.
pub struct Family {
    /// The per-user and per-workspace directory name.
    dir: &'static str,
    /// The variable that moves the user directory's parent (`GEMINI_CLI_HOME`), or the user
    /// directory itself (`QWEN_HOME`).
    home_var: &'static str,
    home_var_is_the_dir: bool,
    system_var: &'static str,
    defaults_var: &'static str,
    system_default: &'static str,
    trust_var: Option<&'static str>,
    subcommands: &'static [&'static str],
}

pub const GEMINI: Family = Family {
    dir: ".gemini",
    home_var: "GEMINI_CLI_HOME",
    home_var_is_the_dir: false,
    system_var: "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    defaults_var: "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    system_default: "/etc/gemini-cli/settings.json",
    trust_var: Some("GEMINI_CLI_TRUST_WORKSPACE"),
    subcommands: &["mcp", "extensions", "extension", "skills", "hooks"],
};

pub const QWEN: Family = Family {
    dir: ".qwen",
    home_var: "QWEN_HOME",
    home_var_is_the_dir: true,
    system_var: "QWEN_CODE_SYSTEM_SETTINGS_PATH",
    defaults_var: "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
    system_default: "/etc/qwen-code/settings.json",
    trust_var: None,
    subcommands: &["mcp", "extensions", "extension", "channel", "auth"],
};

pub fn prepare(family: Family, args: &[String], context: &AgentContext) -> Result<Override, AgentError> {
    if let Some(first) = args.first()
        && family.subcommands.contains(&first.as_str())
    {
        return Err(AgentError::Unsupported(format!("`{first}` starts no agent session")));
    }
    let user_dir = match context.var(family.home_var) {
        Some(dir) if family.home_var_is_the_dir => PathBuf::from(dir),
        Some(dir) => Path::new(dir).join(family.dir),
        None => context.home.join(family.dir),
    };
    let system_path = context
        .var(family.system_var)
        .map_or_else(|| PathBuf::from(family.system_default), PathBuf::from);
    let defaults_path = context.var(family.defaults_var).map_or_else(
        || system_path.with_file_name("system-defaults.json"),
        PathBuf::from,
    );
    let object = || Value::Object(Default::default());
    let system = read_json(&system_path)?.unwrap_or_else(object);
    let defaults = read_json(&defaults_path)?.unwrap_or_else(object);
    let user = read_json(&user_dir.join("settings.json"))?.unwrap_or_else(object);
    let workspace_path = context.cwd.join(family.dir).join("settings.json");
    let workspace = if workspace_path == user_dir.join("settings.json") {
        object()
    } else {
        read_json(&workspace_path)?.unwrap_or_else(object)
    };
    let layers = [&defaults, &user, &system];
    let trusted = workspace_trusted(&family, context, &user_dir, &layers);
    let mut servers: BTreeMap<String, Value> = BTreeMap::new();
    for layer in [&defaults, &user]
        .into_iter()
        .chain(trusted.then_some(&workspace))
        .chain([&system])
    {
        servers.extend(servers_under(layer, "mcpServers"));
    }
    let mut out = Override {
        how: format!("{} (a settings file of tracer's)", family.system_var),
        args: args.to_vec(),
        ..Override::default()
    };
    let mut overrides = serde_json::Map::new();
    for (name, mut entry) in servers {
        urls_in(&entry, &mut out.urls);
        let Some(command) = entry.get("command").and_then(Value::as_str).map(String::from) else {
            continue;
        };
        let original: Vec<String> = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
            .unwrap_or_default();
        entry["command"] = json!(context.wrap.program());
        entry["args"] = json!(context.wrap.args(&name, &command, &original));
        out.wrapped.push(name.clone());
        overrides.insert(name, entry);
    }
    for layer in [&user, &workspace, &system] {
        for key in ["baseUrl", "baseURL", "endpoint"] {
            find_key(layer, key, &mut out.urls);
        }
    }
    let mut written = match system {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let mut all = match written.remove("mcpServers") {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    all.extend(overrides);
    written.insert("mcpServers".into(), Value::Object(all));
    let text = serde_json::to_string_pretty(&Value::Object(written))
        .map_err(|e| AgentError::Unsupported(e.to_string()))?;
    let file = write_scratch(context.scratch, &format!("{}-system-settings.json", &family.dir[1..]), &text)?;
    out.env.push((family.system_var.into(), file.display().to_string()));
    out.env.push((family.defaults_var.into(), defaults_path.display().to_string()));
    Ok(out)
}

/// Whether the agent reads the workspace's settings: trusted by its variable, folder trust
/// turned off, or the folder (or a parent marked so) in `trustedFolders.json`.
fn workspace_trusted(family: &Family, context: &AgentContext, user_dir: &Path, layers: &[&Value]) -> bool {
    if let Some(var) = family.trust_var {
        match context.var(var) {
            Some("true") => return true,
            Some("false") => return false,
            _ => {}
        }
    }
    let folder_trust_off = layers.iter().any(|layer| {
        layer.pointer("/security/folderTrust/enabled") == Some(&Value::Bool(false))
    });
    if folder_trust_off || family.trust_var.is_none() {
        return true;
    }
    let Ok(Some(folders)) = read_json(&user_dir.join("trustedFolders.json")) else {
        return false;
    };
    let Some(folders) = folders.as_object() else {
        return false;
    };
    folders.iter().any(|(path, level)| {
        let path = Path::new(path);
        match level.as_str() {
            Some("TRUST_FOLDER") => context.cwd.starts_with(path),
            Some("TRUST_PARENT") => path.parent().is_some_and(|p| context.cwd.starts_with(p)),
            _ => false,
        }
    })
}

fn find_key(value: &Value, key: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == key {
                    urls_in(v, out);
                } else {
                    find_key(v, key, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| find_key(v, key, out)),
        _ => {}
    }
}
