//! `tracer run` of the real agents (Claude Code `-p`, Codex `exec`, Gemini CLI `-p`, opencode
//! `run`, Qwen Code `-p`), each against the scripted upstream served over TLS under the agent's real API host
//! (`--resolve`, `--upstream-ca`), offline (`unshare --net` when root), with the notes server as
//! a stdio MCP server in the agent's own config file in a temporary HOME: the note is added, the
//! model hops are decrypted, the wrapped stdio `tools/call append` is recorded, tracer exits with
//! the agent's code, and the config files are byte-identical afterwards, also after `kill -9` of
//! tracer mid-run. Skips unless the agents are installed (`bash scripts/test`), fails when they
//! are not and `TRACER_INTEROP=1`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

use super::https_support::TestPki;

const DRIVER: &str = "tests/interop/agents/run_traced.py";
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub(super) struct Agent {
    bin: &'static str,
    host: &'static str,
    /// The model request's path, without its query.
    model_path: &'static str,
}

pub(super) const CLAUDE: Agent = Agent {
    bin: "claude",
    host: "api.anthropic.com",
    model_path: "/v1/messages",
};
pub(super) const CODEX: Agent = Agent {
    bin: "codex",
    host: "api.openai.com",
    model_path: "/v1/responses",
};
pub(super) const GEMINI: Agent = Agent {
    bin: "gemini",
    host: "generativelanguage.googleapis.com",
    model_path: ":streamGenerateContent",
};
const QWEN: Agent = Agent {
    bin: "qwen",
    host: "api.openai.com",
    model_path: "/v1/chat/completions",
};
const OPENCODE: Agent = Agent {
    bin: "opencode",
    host: "api.openai.com",
    model_path: "/v1/chat/completions",
};

fn agents_dir() -> PathBuf {
    std::env::var_os("TRACER_AGENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agents"))
}

fn installed(agent: &Agent) -> bool {
    let bin = agents_dir()
        .join(agent.bin)
        .join("node_modules/.bin")
        .join(agent.bin);
    let python = Command::new("python3").arg("--version").output().is_ok();
    if bin.exists() && python {
        return true;
    }
    assert!(
        std::env::var("TRACER_INTEROP").as_deref() != Ok("1"),
        "TRACER_INTEROP=1 but {} (or python3) is missing; `bash scripts/test` installs the agents",
        bin.display()
    );
    eprintln!(
        "skipping a tracer run interop test: {} is not installed",
        bin.display()
    );
    false
}

fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let text = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = text
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

pub(super) struct Traced {
    pub(super) _work: tempfile::TempDir,
    pub(super) summary: Value,
    pub(super) db: PathBuf,
}

impl Traced {
    pub(super) fn tracer(&self, args: &[&str]) -> Value {
        let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
            .args(args)
            .arg("--db")
            .arg(&self.db)
            .arg("--json")
            .output()
            .unwrap();
        assert!(output.status.success(), "tracer {args:?}: {output:?}");
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

pub(super) fn run(agent: &Agent, driver_flags: &[&str]) -> Option<Traced> {
    if !installed(agent) {
        return None;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let pki = TestPki::new(&[agent.host]);
    let cert = work.path().join("upstream.pem");
    let key = work.path().join("upstream-key.pem");
    std::fs::write(&cert, pem("CERTIFICATE", &pki.cert)).unwrap();
    std::fs::write(&key, pem("PRIVATE KEY", pki.key.secret_pkcs8_der())).unwrap();
    let ca = pki.write_ca(work.path(), "upstream-ca.pem");
    let mut command = Command::new("python3");
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg(DRIVER)
        .args(["--agent", agent.bin, "--agents-dir"])
        .arg(agents_dir())
        .args(["--tracer", env!("CARGO_BIN_EXE_tracer")])
        .args(["--notes-server", env!("CARGO_BIN_EXE_notes-server")])
        .arg("--work")
        .arg(work.path().join("run"))
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .arg("--upstream-ca")
        .arg(&ca);
    command.args(driver_flags);
    let netns = Command::new("unshare")
        .args(["--net", "sh", "-c", "ip link set lo up"])
        .output()
        .is_ok_and(|o| o.status.success());
    if netns {
        command.arg("--netns");
    } else {
        eprintln!("no `unshare --net` here: the agent runs on this network, telemetry off");
    }
    let output = command.output().unwrap();
    let summary_path = work.path().join("run/summary.json");
    assert!(
        output.status.success() && summary_path.exists(),
        "the driver failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: Value = serde_json::from_slice(&std::fs::read(summary_path).unwrap()).unwrap();
    eprintln!(
        "tracer run {}: exit {}, {} s",
        agent.bin, summary["exit_code"], summary["seconds"]
    );
    let db = work.path().join("run/tracer.db");
    Some(Traced {
        _work: work,
        summary,
        db,
    })
}

fn agent_does_buy_milk_under_tracer_run(agent: &Agent) {
    let Some(run) = run(agent, &[]) else {
        return;
    };
    let s = &run.summary;
    assert_eq!(s["timed_out"], false, "{s:#}");
    assert_eq!(s["exit_code"], 0, "the agent (so tracer) failed: {s:#}");
    assert_eq!(s["notes"], "buy milk\n", "{s:#}");
    assert_eq!(
        s["configs_before"], s["configs_after"],
        "a config file changed: {s:#}"
    );
    assert_eq!(s["scratch_left"], serde_json::json!([]), "{s:#}");
    let stderr = s["stderr"].as_str().unwrap();
    let report: Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(report["exit_code"], s["exit_code"], "{report:#}");
    assert_eq!(
        report["stdio_servers_wrapped"],
        serde_json::json!(["notes"]),
        "{stderr}"
    );
    assert!(
        stderr.contains("stdio MCP servers recorded through tracer wrap: notes"),
        "{stderr}"
    );

    let hops = run.tracer(&["ls", "--hops", "-n", "1000"]);
    let hops = hops.as_array().unwrap();
    let model: Vec<&Value> = hops
        .iter()
        .filter(|h| {
            h["route"] == agent.host && h["path"].as_str().unwrap().contains(agent.model_path)
        })
        .collect();
    assert!(model.len() >= 2, "the model hops, decrypted: {hops:#?}");
    for hop in &model {
        assert_eq!(hop["role"], "model", "{hop}");
        assert_eq!(hop["status"], 200, "{hop}");
        assert!(hop["response_body_len"].as_i64().unwrap() > 0, "{hop}");
    }
    let call = hops
        .iter()
        .find(|h| h["transport"] == "stdio" && h["method"] == "tools/call")
        .unwrap_or_else(|| panic!("no stdio tools/call: {hops:#?}"));
    assert_eq!(call["route"], "notes");
    let trace_id = call["trace_id"]
        .as_str()
        .expect("the tools/call is grouped");
    let log = run.tracer(&["show", trace_id]);
    let messages = log["messages"].as_array().unwrap();
    let asked = messages
        .iter()
        .find(|m| m["case"] == "mcp_tool_call")
        .unwrap_or_else(|| panic!("{log:#}"));
    assert!(
        asked["summary"].as_str().unwrap().contains("buy milk"),
        "{asked:#}"
    );
    // Grouping is every capture path's: reported, not asserted here.
    let together = model.iter().any(|h| h["trace_id"] == call["trace_id"]);
    eprintln!(
        "tracer run {}: {} model hops; the stdio tools/call is {} trace as a model hop",
        agent.bin,
        model.len(),
        if together {
            "in the same"
        } else {
            "NOT in the same"
        }
    );
}

fn config_survives_kill_9(agent: &Agent) {
    let Some(run) = run(agent, &["--kill-after-first-request"]) else {
        return;
    };
    let s = &run.summary;
    assert_eq!(s["killed"], true, "tracer was not killed mid-run: {s:#}");
    assert_eq!(
        s["configs_before"], s["configs_after"],
        "a config file changed: {s:#}"
    );
}

#[test]
fn claude_code_under_tracer_run() {
    agent_does_buy_milk_under_tracer_run(&CLAUDE);
    config_survives_kill_9(&CLAUDE);
}

#[test]
fn codex_under_tracer_run() {
    agent_does_buy_milk_under_tracer_run(&CODEX);
    config_survives_kill_9(&CODEX);
}

#[test]
fn gemini_cli_under_tracer_run() {
    agent_does_buy_milk_under_tracer_run(&GEMINI);
    config_survives_kill_9(&GEMINI);
}

#[test]
fn opencode_under_tracer_run() {
    agent_does_buy_milk_under_tracer_run(&OPENCODE);
    config_survives_kill_9(&OPENCODE);
}

#[test]
fn qwen_code_under_tracer_run() {
    agent_does_buy_milk_under_tracer_run(&QWEN);
    config_survives_kill_9(&QWEN);
}

/// Claude Code's own screen (its TUI) under `tracer run` in tmux: the prompt typed, the note added
/// through the wrapped stdio server, `/exit` typed, tracer leaving with Claude Code's code.
#[test]
fn claude_code_interactive_keeps_its_screen_under_tracer_run() {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(
            std::env::var("TRACER_INTEROP").as_deref() != Ok("1"),
            "TRACER_INTEROP=1 but tmux is not installed"
        );
        return;
    }
    let Some(run) = run(&CLAUDE, &["--interactive"]) else {
        return;
    };
    let s = &run.summary;
    let screen = s["screen"].as_str().unwrap_or("");
    assert_eq!(s["notes"], "buy milk\n", "{screen}");
    assert_eq!(s["exit_code"], 0, "{screen}");
    assert!(screen.contains("Claude Code v"), "its own screen: {screen}");
    assert!(screen.contains("Add buy milk to my notes"), "{screen}");
    assert!(screen.contains("tracer run: recording to"), "{screen}");
    assert_eq!(s["configs_before"], s["configs_after"], "{s:#}");
    let hops = run.tracer(&["ls", "--hops", "-n", "1000"]);
    let hops = hops.as_array().unwrap();
    assert!(
        hops.iter()
            .any(|h| h["transport"] == "stdio" && h["method"] == "tools/call"),
        "{hops:#?}"
    );
    assert!(
        hops.iter()
            .any(|h| h["route"] == CLAUDE.host && h["status"] == 200),
        "{hops:#?}"
    );
}
