//! The agents `tracer run` knows (Claude Code, Codex CLI, Gemini CLI, opencode, Qwen Code):
//! recognised by the command's name, their MCP server lists read from the files they read, with
//! their precedence, and an override for this run (a flag, a variable, a file tracer writes in its
//! own scratch directory) that starts each stdio server through `tracer wrap`. The user's files
//! are only ever read.

mod claude;
mod codex;
mod gemini;
mod opencode;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// An agent tracer knows how to configure for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnownAgent {
    ClaudeCode,
    Codex,
    GeminiCli,
    Opencode,
    QwenCode,
}

impl KnownAgent {
    /// The agent a command runs, by the program's file name.
    pub fn recognise(program: &str) -> Option<KnownAgent> {
        let name = Path::new(program).file_name()?.to_str()?;
        let name = name.strip_suffix(".exe").unwrap_or(name);
        Some(match name {
            "claude" => KnownAgent::ClaudeCode,
            "codex" => KnownAgent::Codex,
            "gemini" => KnownAgent::GeminiCli,
            "opencode" => KnownAgent::Opencode,
            "qwen" => KnownAgent::QwenCode,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            KnownAgent::ClaudeCode => "Claude Code",
            KnownAgent::Codex => "Codex CLI",
            KnownAgent::GeminiCli => "Gemini CLI",
            KnownAgent::Opencode => "opencode",
            KnownAgent::QwenCode => "Qwen Code",
        }
    }
}

/// How a stdio server is started through `tracer wrap`, into the run's database.
#[derive(Debug, Clone)]
pub struct WrapCommand {
    /// tracer's own executable.
    pub tracer: PathBuf,
    /// The database, absolute (agents start servers in other directories).
    pub db: PathBuf,
    pub redact: bool,
    pub max_body: usize,
    /// The run's id, given to each wrapped server so its hops join the run.
    pub run_id: Option<String>,
}

impl WrapCommand {
    /// The arguments after the tracer executable that run `command args` wrapped as `name`.
    pub fn args(&self, name: &str, command: &str, args: &[String]) -> Vec<String> {
        let mut out = vec![
            "--db".to_string(),
            self.db.display().to_string(),
            "wrap".to_string(),
            "--name".to_string(),
            name.to_string(),
            "--max-body".to_string(),
            self.max_body.to_string(),
        ];
        if !self.redact {
            out.push("--no-redact".to_string());
        }
        if let Some(run_id) = &self.run_id {
            out.push("--run-id".to_string());
            out.push(run_id.clone());
        }
        out.push("--".to_string());
        out.push(command.to_string());
        out.extend(args.iter().cloned());
        out
    }

    pub fn program(&self) -> String {
        self.tracer.display().to_string()
    }
}

/// What an agent override reads: where the agent runs and what it would see.
pub struct AgentContext<'a> {
    pub home: PathBuf,
    pub cwd: PathBuf,
    /// The environment the agent gets (before the override's own variables).
    pub env: &'a HashMap<String, String>,
    pub wrap: &'a WrapCommand,
    /// tracer's private directory for this run: override files go here, nowhere else.
    pub scratch: &'a Path,
}

impl AgentContext<'_> {
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// The run's changes for one agent.
#[derive(Debug, Default)]
pub struct Override {
    /// The agent's arguments for this run (the user's, with the override's flags).
    pub args: Vec<String>,
    /// Variables set for this run only.
    pub env: Vec<(String, String)>,
    /// The stdio servers started through `tracer wrap`.
    pub wrapped: Vec<String>,
    /// Stdio servers the override cannot reach (not recorded).
    pub skipped: Vec<String>,
    /// URLs found in the configuration (model base URLs, remote MCP servers).
    pub urls: Vec<String>,
    /// How the override reaches the agent (for the first line).
    pub how: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{0}")]
    Unsupported(String),
}

/// Reads the agent's MCP servers and makes the override for this run.
pub fn prepare(
    agent: KnownAgent,
    args: &[String],
    context: &AgentContext,
) -> Result<Override, AgentError> {
    match agent {
        KnownAgent::ClaudeCode => claude::prepare(args, context),
        KnownAgent::Codex => codex::prepare(args, context),
        KnownAgent::GeminiCli => gemini::prepare(gemini::GEMINI, args, context),
        KnownAgent::QwenCode => gemini::prepare(gemini::QWEN, args, context),
        KnownAgent::Opencode => opencode::prepare(args, context),
    }
}

/// A file's text, or None when it does not exist.
fn read_optional(path: &Path) -> Result<Option<String>, AgentError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(AgentError::Read {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// A JSON (or JSONC) file's value, or None when it does not exist.
fn read_json(path: &Path) -> Result<Option<serde_json::Value>, AgentError> {
    let Some(text) = read_optional(path)? else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Ok(Some(serde_json::Value::Object(Default::default())));
    }
    super::jsonc::parse(&text)
        .map(Some)
        .map_err(|e| AgentError::Parse {
            path: path.display().to_string(),
            message: e.to_string(),
        })
}

/// The object under `key` of a JSON value, as name → entry.
fn servers_under(value: &serde_json::Value, key: &str) -> BTreeMap<String, serde_json::Value> {
    value
        .get(key)
        .and_then(serde_json::Value::as_object)
        .map(|map| map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// The URL-valued strings of a server entry or a provider (`url`, `httpUrl`, `baseURL`, …).
fn urls_in(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(text) if super::hosts::url_host(text).is_some() => {
            out.push(text.clone());
        }
        serde_json::Value::Object(map) => map.values().for_each(|v| urls_in(v, out)),
        serde_json::Value::Array(items) => items.iter().for_each(|v| urls_in(v, out)),
        _ => {}
    }
}

/// Writes an override file into the scratch directory (readable by the user only, created
/// new: nothing there is ever written through).
fn write_scratch(scratch: &Path, name: &str, text: &str) -> Result<PathBuf, AgentError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = scratch.join(name);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|source| AgentError::Read {
            path: path.display().to_string(),
            source,
        })?;
    Ok(path)
}

/// The directories from the git root (or the directory itself) down to `dir`.
fn project_dirs(dir: &Path) -> Vec<PathBuf> {
    let root = dir
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir);
    let mut dirs: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| *d != root)
        .map(Path::to_path_buf)
        .collect();
    dirs.push(root.to_path_buf());
    dirs.reverse();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_known_by_their_command_name() {
        assert_eq!(
            KnownAgent::recognise("/opt/bin/claude"),
            Some(KnownAgent::ClaudeCode)
        );
        assert_eq!(KnownAgent::recognise("codex"), Some(KnownAgent::Codex));
        assert_eq!(KnownAgent::recognise("qwen"), Some(KnownAgent::QwenCode));
        assert_eq!(KnownAgent::recognise("python3"), None);
    }

    #[test]
    fn a_wrapped_server_keeps_its_command_after_the_double_dash() {
        let wrap = WrapCommand {
            tracer: "/bin/tracer".into(),
            db: "/d/t.db".into(),
            redact: false,
            max_body: 10,
            run_id: Some("r1".into()),
        };
        let args = wrap.args("notes", "notes-server", &["--stdio".into()]);
        assert_eq!(
            args.join(" "),
            "--db /d/t.db wrap --name notes --max-body 10 --no-redact --run-id r1 -- notes-server --stdio"
        );
    }
}
