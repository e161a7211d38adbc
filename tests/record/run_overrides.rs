//! `tracer run` of each known agent, seen from the agent: stand-in scripts named like the agents
//! (claude, codex, gemini, qwen, opencode) print the arguments, variables and files the override
//! gives them while the run lasts; the user's config files are byte-identical afterwards.

use std::path::{Path, PathBuf};

use super::run_cli::{stderr_lines, tracer_run};

/// A stand-in for an agent: a script named like it that prints its arguments and what the
/// override points at, while the run lasts.
fn stand_in(bin: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin).unwrap();
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs the stand-in under `tracer run` with HOME in `dir`; returns (stdout, first line).
fn run_stand_in(dir: &Path, program: &Path, args: &[&str]) -> (String, String) {
    let home = dir.join("home");
    let home_text = home.display().to_string();
    let mut all = vec!["--quiet", "--", program.to_str().unwrap()];
    all.extend(args);
    let output = tracer_run(
        dir,
        &[
            ("HOME", &home_text),
            ("XDG_CONFIG_HOME", ""),
            ("CODEX_HOME", ""),
            ("GEMINI_CLI_HOME", ""),
            ("QWEN_HOME", ""),
        ],
        &all,
    );
    assert!(output.status.success(), "{output:?}");
    let first = stderr_lines(&output)
        .into_iter()
        .find(|l| l.starts_with("tracer run:"))
        .unwrap();
    (String::from_utf8_lossy(&output.stdout).into_owned(), first)
}

const STDIO_NOTES: &str = r#"{"command": "notes-server", "args": ["--stdio", "--file", "/n.txt"]}"#;

#[test]
fn claude_code_reads_one_mcp_config_of_tracers_with_strict_mcp_config() {
    let dir = tempfile::tempdir().unwrap();
    let state = format!(
        r#"{{"mcpServers": {{"notes": {STDIO_NOTES}, "web": {{"type": "http", "url": "https://mcp.corp.test/mcp"}}}}}}"#
    );
    let state_path = dir.path().join("home/.claude.json");
    write(&state_path, &state);
    let claude = stand_in(
        &dir.path().join("bin"),
        "claude",
        r#"echo "ARGS $*"; cat "$2""#,
    );
    let (out, first) = run_stand_in(dir.path(), &claude, &["-p", "hi"]);
    assert!(out.contains("--strict-mcp-config -p hi"), "{out}");
    let config: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    let notes = &config["mcpServers"]["notes"];
    assert_eq!(notes["command"], env!("CARGO_BIN_EXE_tracer"));
    let args: Vec<&str> = notes["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&args[2..5], ["wrap", "--name", "notes"]);
    assert_eq!(
        &args[args.len() - 4..],
        ["notes-server", "--stdio", "--file", "/n.txt"]
    );
    assert_eq!(
        config["mcpServers"]["web"]["url"],
        "https://mcp.corp.test/mcp"
    );
    assert!(
        first.contains("Claude Code's stdio MCP servers recorded through tracer wrap: notes"),
        "{first}"
    );
    assert!(first.contains("decrypting mcp.corp.test, "), "{first}");
    assert_eq!(std::fs::read_to_string(&state_path).unwrap(), state);
}

#[test]
fn codex_gets_c_overrides_before_its_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let config = "[mcp_servers.notes]\ncommand = \"notes-server\"\nargs = [\"--stdio\"]\n";
    let path = dir.path().join("home/.codex/config.toml");
    write(&path, config);
    let codex = stand_in(
        &dir.path().join("bin"),
        "codex",
        r#"for a in "$@"; do echo "$a"; done"#,
    );
    let (out, first) = run_stand_in(dir.path(), &codex, &["exec", "hi"]);
    let lines: Vec<&str> = out.lines().collect();
    // The agent's own telemetry pointed at tracer first (docs/agent-telemetry.md), then the
    // stdio servers wrapped, then the user's arguments.
    assert_eq!(lines[0], "-c");
    assert!(
        lines[1].starts_with("otel.exporter={otlp-http={endpoint=\"http://127.0.0.1:"),
        "{out}"
    );
    let at = lines
        .iter()
        .position(|l| l.starts_with("mcp_servers.notes.command="))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(lines[at - 1], "-c");
    assert_eq!(
        lines[at],
        format!(
            "mcp_servers.notes.command=\"{}\"",
            env!("CARGO_BIN_EXE_tracer")
        )
    );
    assert!(
        lines[at + 2].starts_with("mcp_servers.notes.args=[\"--db\""),
        "{out}"
    );
    assert!(
        lines[at + 2].ends_with("\"--\", \"notes-server\", \"--stdio\"]"),
        "{out}"
    );
    assert_eq!(&lines[at + 3..], ["exec", "hi"]);
    assert!(
        first.contains("Codex CLI's own telemetry on, to tracer"),
        "{first}"
    );
    assert!(first.contains("Codex CLI's stdio MCP servers recorded through tracer wrap: notes"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), config);
}

#[test]
fn gemini_cli_gets_a_home_of_tracers_linking_to_the_users_own() {
    let dir = tempfile::tempdir().unwrap();
    let settings = format!(r#"{{"mcpServers": {{"notes": {STDIO_NOTES}}}, "x": 1}}"#);
    let path = dir.path().join("home/.gemini/settings.json");
    write(&path, &settings);
    write(&dir.path().join("home/.gemini/oauth_creds.json"), "{}");
    let gemini = stand_in(
        &dir.path().join("bin"),
        "gemini",
        r#"readlink "$GEMINI_CLI_HOME/.gemini/oauth_creds.json"; cat "$GEMINI_CLI_HOME/.gemini/settings.json""#,
    );
    let (out, first) = run_stand_in(dir.path(), &gemini, &["-p", "hi"]);
    let linked = dir.path().join("home/.gemini/oauth_creds.json");
    assert!(out.starts_with(&format!("{}\n", linked.display())), "{out}");
    let written: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    assert_eq!(
        written["mcpServers"]["notes"]["command"],
        env!("CARGO_BIN_EXE_tracer")
    );
    assert_eq!(written["x"], 1, "the user's settings, copied");
    assert!(first.contains("Gemini CLI's stdio MCP servers recorded through tracer wrap: notes"));
    assert!(first.contains("via GEMINI_CLI_HOME"), "{first}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), settings);
}

#[test]
fn qwen_code_reads_a_system_settings_file_of_tracers() {
    let dir = tempfile::tempdir().unwrap();
    let settings = format!(r#"{{"mcpServers": {{"notes": {STDIO_NOTES}}}}}"#);
    let path = dir.path().join("home/.qwen/settings.json");
    write(&path, &settings);
    let qwen = stand_in(
        &dir.path().join("bin"),
        "qwen",
        r#"echo "DEFAULTS $QWEN_CODE_SYSTEM_DEFAULTS_PATH"; cat "$QWEN_CODE_SYSTEM_SETTINGS_PATH""#,
    );
    let (out, first) = run_stand_in(dir.path(), &qwen, &["-p", "hi"]);
    assert!(
        out.starts_with("DEFAULTS /etc/qwen-code/system-defaults.json\n"),
        "{out}"
    );
    let written: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    assert_eq!(
        written["mcpServers"]["notes"]["command"],
        env!("CARGO_BIN_EXE_tracer")
    );
    assert!(first.contains("Qwen Code's stdio MCP servers recorded through tracer wrap: notes"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), settings);
}

#[test]
fn opencode_gets_its_config_content_with_the_wrapped_command() {
    let dir = tempfile::tempdir().unwrap();
    let config = r#"{
  // a comment, as opencode.jsonc allows
  "mcp": {"notes": {"type": "local", "command": ["notes-server", "--stdio"], "environment": {"A": "1"}}},
  "provider": {"p": {"options": {"baseURL": "https://llm.corp.test/v1"}}},
}"#;
    let path = dir.path().join("home/.config/opencode/opencode.jsonc");
    write(&path, config);
    let opencode = stand_in(
        &dir.path().join("bin"),
        "opencode",
        r#"echo "$OPENCODE_CONFIG_CONTENT""#,
    );
    let (out, first) = run_stand_in(dir.path(), &opencode, &["run", "hi"]);
    let content: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let command = content["mcp"]["notes"]["command"].as_array().unwrap();
    assert_eq!(command[0], env!("CARGO_BIN_EXE_tracer"));
    assert_eq!(command[command.len() - 2], "notes-server");
    assert_eq!(
        content["mcp"]["notes"]["type"], "local",
        "the entry goes whole: {content}"
    );
    assert_eq!(
        content["mcp"]["notes"]["environment"]["A"], "1",
        "{content}"
    );
    assert!(first.contains("opencode's stdio MCP servers recorded through tracer wrap: notes"));
    assert!(first.contains("decrypting llm.corp.test, "), "{first}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), config);
}

#[test]
fn an_agent_with_no_stdio_server_runs_as_it_was_asked() {
    let dir = tempfile::tempdir().unwrap();
    let state = r#"{"mcpServers": {"web": {"type": "http", "url": "https://mcp.corp.test/mcp"}}}"#;
    write(&dir.path().join("home/.claude.json"), state);
    let claude = stand_in(&dir.path().join("bin"), "claude", r#"echo "ARGS $*""#);
    let (out, first) = run_stand_in(dir.path(), &claude, &["-p", "hi"]);
    assert_eq!(out, "ARGS -p hi\n");
    assert!(
        first.contains("Claude Code: no stdio MCP servers configured"),
        "{first}"
    );
    assert!(first.contains("decrypting mcp.corp.test, "), "{first}");
}
