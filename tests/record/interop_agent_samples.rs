//! sample-traces/agents/ is reproducible: `tests/interop/agents/record_agent_samples.py` records
//! the four coding agents again (into a temp dir) and each new sample reads as the committed one:
//! the same title and status, the same kinds of model, WebSocket and tool-call message (a tool
//! call to append, the subagent's turns, the WebSocket's); the script itself refuses a sample that
//! holds a key the agent was given. Gated like interop_agents.rs (skips
//! without the agents unless TRACER_INTEROP=1).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::interop_agents::{ONE_AT_A_TIME, skip_or_fail};

const SAMPLES: [(&str, &str); 4] = [
    ("claude-code-subagent", "claude"),
    ("codex-websocket", "codex"),
    ("gemini-cli", "gemini"),
    ("opencode", "opencode"),
];

/// The kinds of its model, WebSocket and tool-call messages (where the MCP handshake's and
/// session's messages land, start-up or this trace, depends on their timing).
fn cases(log: &Value) -> BTreeSet<String> {
    log["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["case"].as_str().unwrap().to_owned())
        .filter(|case| {
            case.starts_with("model_")
                || case.starts_with("websocket_")
                || case == "mcp_tool_call"
                || case == "mcp_tool_result"
        })
        .collect()
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn interop_the_agent_samples_record_again_as_committed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let agents = std::env::var_os("TRACER_AGENTS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target/agents"));
    for (_, bin) in SAMPLES {
        if !agents
            .join(bin)
            .join("node_modules/.bin")
            .join(bin)
            .exists()
        {
            skip_or_fail(&format!(
                "{bin} is not installed in {}; `bash scripts/test` installs it",
                agents.display()
            ));
            return;
        }
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = tempfile::tempdir().unwrap();
    let recorded = Command::new("python3")
        .current_dir(root)
        .arg("tests/interop/agents/record_agent_samples.py")
        .args(["--tracer", env!("CARGO_BIN_EXE_tracer")])
        .args(["--notes-server", env!("CARGO_BIN_EXE_notes-server")])
        .arg("--agents-dir")
        .arg(&agents)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&recorded.stdout);
    assert!(
        recorded.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    eprintln!("{said}");
    for (name, _) in SAMPLES {
        let fresh = read(&out.path().join(format!("{name}.json")));
        let committed = read(&root.join(format!("sample-traces/agents/{name}.json")));
        assert_eq!(
            fresh["trace"]["title"], "Add buy milk to my notes",
            "{name}"
        );
        assert_eq!(
            fresh["trace"]["status"], committed["trace"]["status"],
            "{name}"
        );
        assert_eq!(cases(&fresh), cases(&committed), "{name}");
        assert!(cases(&fresh).contains("mcp_tool_call"), "{name}");
    }
    let claude = read(&out.path().join("claude-code-subagent.json"));
    let subagent = claude["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["summary"].as_str().unwrap().starts_with("subagent 1 ("))
        .count();
    assert_eq!(subagent, 4, "the subagent's two turns");
    let codex = read(&out.path().join("codex-websocket.json"));
    assert!(
        codex["hops"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h.get("websocket").is_some()),
        "the WebSocket hop"
    );
}
