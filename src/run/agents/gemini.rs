//! Gemini CLI and Qwen Code (its fork): MCP servers from the system defaults, the user's and the
//! (trusted) workspace's `settings.json` and the system settings, merged by server name with the
//! system file last.
//!
//! Qwen Code's override is a system settings file of tracer's own (the user's system file's
//! content with each stdio server behind `tracer wrap`), named by `QWEN_CODE_SYSTEM_SETTINGS_PATH`,
//! the system defaults kept where they were. Gemini CLI skips a system settings file unless it
//! and every folder above it are root's and writable by no one else, so its override is a home
//! of tracer's (`GEMINI_CLI_HOME`): a `.gemini` whose entries link to the user's own, but for
//! `settings.json`, a copy with the stdio servers wrapped. A server the workspace or system
//! settings define wins over that copy and is not wrapped (said in the first line).

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
    /// The override: a home of tracer's (Gemini CLI) or a system settings file (Qwen Code).
    by_home: bool,
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
    by_home: true,
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
    by_home: false,
};

pub fn prepare(
    family: Family,
    args: &[String],
    context: &AgentContext,
) -> Result<Override, AgentError> {
    if let Some(first) = args.first()
        && family.subcommands.contains(&first.as_str())
    {
        return Err(AgentError::Unsupported(format!(
            "`{first}` starts no agent session"
        )));
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
    let mut servers: BTreeMap<String, (Value, bool)> = BTreeMap::new();
    for (layer, below_user) in [(&defaults, true), (&user, true)]
        .into_iter()
        .chain(trusted.then_some((&workspace, false)))
        .chain([(&system, false)])
    {
        for (name, entry) in servers_under(layer, "mcpServers") {
            servers.insert(name, (entry, below_user));
        }
    }
    let mut out = Override {
        how: if family.by_home {
            format!("{} (a home of tracer's)", family.home_var)
        } else {
            format!("{} (a settings file of tracer's)", family.system_var)
        },
        args: args.to_vec(),
        ..Override::default()
    };
    let mut overrides = serde_json::Map::new();
    for (name, (mut entry, below_user)) in servers {
        urls_in(&entry, &mut out.urls);
        let Some(command) = entry
            .get("command")
            .and_then(Value::as_str)
            .map(String::from)
        else {
            continue;
        };
        if family.by_home && !below_user {
            out.skipped.push(name);
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
    if out.wrapped.is_empty() {
        return Ok(out);
    }
    let base = if family.by_home { user } else { system };
    let mut written = match base {
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
    if family.by_home {
        let home = overlay_home(context.scratch, &user_dir, family.dir)?;
        write_scratch(&home.join(family.dir), "settings.json", &text)?;
        out.env
            .push((family.home_var.into(), home.display().to_string()));
    } else {
        let file = write_scratch(
            context.scratch,
            &format!("{}-system-settings.json", &family.dir[1..]),
            &text,
        )?;
        out.env
            .push((family.system_var.into(), file.display().to_string()));
        out.env.push((
            family.defaults_var.into(),
            defaults_path.display().to_string(),
        ));
    }
    Ok(out)
}

/// A home in the scratch directory whose `DIR` holds a link to each entry of the user's own
/// (`settings.json` excepted: the caller writes its copy there).
fn overlay_home(scratch: &Path, user_dir: &Path, dir: &str) -> Result<PathBuf, AgentError> {
    let home = scratch.join("agent-home");
    let overlay = home.join(dir);
    let failed = |path: &Path, source: std::io::Error| AgentError::Read {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(&overlay).map_err(|e| failed(&overlay, e))?;
    let entries = match std::fs::read_dir(user_dir) {
        Ok(entries) => entries.flatten().collect(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => return Err(failed(user_dir, error)),
    };
    for entry in entries {
        if entry.file_name() == "settings.json" {
            continue;
        }
        let link = overlay.join(entry.file_name());
        std::os::unix::fs::symlink(entry.path(), &link).map_err(|e| failed(&link, e))?;
    }
    Ok(home)
}

/// Whether the agent reads the workspace's settings: trusted by its variable, folder trust
/// turned off, or the folder (or a parent marked so) in `trustedFolders.json`.
fn workspace_trusted(
    family: &Family,
    context: &AgentContext,
    user_dir: &Path,
    layers: &[&Value],
) -> bool {
    if let Some(var) = family.trust_var {
        match context.var(var) {
            Some("true") => return true,
            Some("false") => return false,
            _ => {}
        }
    }
    let folder_trust_off = layers
        .iter()
        .any(|layer| layer.pointer("/security/folderTrust/enabled") == Some(&Value::Bool(false)));
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
