//! The five real agents' runs (tests/fixtures/agents/) read as a user would want them: titled
//! with the user's own words, side calls (a title, routing, telemetry) told apart from the
//! conversation and never a step of `diff`, each model tool call linked to the `tools/call`
//! that ran it whatever the host named the tool, and every run `ok`.

use std::process::Command;

use crate::agent_trace::{agent_dir, agent_hops, hop_of};
use tracer::compare::steps::run_view;
use tracer_export::hop_log::HopLog;
use tracer_store::traces::TraceRow;
use tracer_trace::read::side_calls::Conversations;
use tracer_trace::{
    Case, Direction, ExplainedMessage, GroupOptions, RecordedHop, SideCall, TraceKind, TraceStatus,
    explain_trace, group, summarize,
};
use tracer_wire::hop::{BodyCapture, HopEnd, HopStart, HopState, Role, Transport};

const AGENTS: [&str; 5] = [
    "claude-code",
    "codex",
    "gemini-cli",
    "opencode",
    "qwen-code",
];
const WORDS: &str = "Add buy milk to my notes";

fn message<'a>(
    messages: &'a [ExplainedMessage],
    hop: &RecordedHop,
    direction: Direction,
) -> &'a ExplainedMessage {
    messages
        .iter()
        .find(|m| m.hop_id == hop.start.id && m.direction == direction)
        .expect("the hop's message")
}

fn hop_log_file(dir: &std::path::Path, agent: &str, hops: &[RecordedHop]) -> std::path::PathBuf {
    let row = TraceRow {
        id: format!("{:0>32}", 7),
        title: summarize(hops).title,
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: None,
        created_by: "test".into(),
    };
    let file = dir.join(format!("{agent}.json"));
    std::fs::write(&file, HopLog::from_recorded(row, hops).to_json_pretty()).unwrap();
    file
}

fn tracer(dir: &std::path::Path, args: &[&std::ffi::OsStr]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(dir.join("t.db"))
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{text}");
    text
}

#[test]
fn every_agent_is_titled_with_the_users_words_and_ok() {
    for agent in AGENTS {
        let hops = agent_hops(agent);
        let summary = summarize(&hops);
        assert_eq!(summary.title.as_deref(), Some(WORDS), "{agent}");
        assert_eq!(summary.status, TraceStatus::Ok, "{agent}");
        // Live grouping titles the user's trace the same, and no trace with the host's words.
        let inputs: Vec<_> = hops.iter().map(RecordedHop::trace_input).collect();
        let grouping = group(&inputs, GroupOptions::default());
        let titles: Vec<Option<&str>> =
            grouping.traces.iter().map(|t| t.title.as_deref()).collect();
        assert!(titles.contains(&Some(WORDS)), "{agent}: {titles:?}");
        assert!(
            titles.iter().flatten().all(|t| *t == WORDS),
            "{agent}: {titles:?}"
        );
        let user = grouping.traces.iter().find(|t| t.title.is_some()).unwrap();
        assert_eq!(user.kind, TraceKind::Request, "{agent}");
    }
}

#[test]
fn show_heads_the_trace_with_the_words_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let hops = agent_hops("claude-code");
    let file = hop_log_file(dir.path(), "claude-code", &hops);
    let shown = tracer(dir.path(), &["show".as_ref(), file.as_os_str()]);
    let head = shown.lines().next().unwrap();
    assert!(head.ends_with(&format!("  \"{WORDS}\"")), "{head}");
    assert!(!shown.contains("<system-reminder>"), "{shown}");
}

#[test]
fn side_calls_stand_apart_from_the_conversation() {
    for (agent, side, kind) in [
        ("opencode", "side1_request.json", SideCall::Title),
        ("gemini-cli", "side1_request.json", SideCall::Routing),
    ] {
        let hops = agent_hops(agent);
        let side_hop = hop_of(&hops, agent, side);
        let first = hop_of(&hops, agent, "turn1_request.json");
        let messages = explain_trace(&hops);
        let asked = message(&messages, side_hop, Direction::Request);
        assert_eq!(asked.side_call, Some(kind), "{agent}");
        assert!(
            asked
                .summary
                .starts_with(&format!("side call ({}): ", kind.as_str())),
            "{agent}: {}",
            asked.summary
        );
        let answered = message(&messages, side_hop, Direction::Response);
        assert_eq!(answered.case, Case::ModelSideAnswer, "{agent}");
        assert!(!answered.explanation.contains("agent loop stops here"));
        // The first request of the loop is the first of its conversation: nothing "again".
        let loop_start = message(&messages, first, Direction::Request);
        assert_eq!(loop_start.side_call, None);
        assert_eq!(loop_start.case, Case::ModelRequest, "{agent}");
        for words in ["more than last time", "re-sends the whole history"] {
            assert!(
                !loop_start.summary.contains(words) && !loop_start.explanation.contains(words),
                "{agent}: {}",
                loop_start.explanation
            );
        }
        // Not a step of diff, rerun or eval.
        let view = run_view("t", None, &hops);
        assert_eq!(view.steps.len(), 2, "{agent}");
        assert!(view.steps.iter().all(|s| s.hop_id != side_hop.start.id));
    }
    // Every other agent's steps are its loop's turns, one per model request.
    for (agent, turns) in [("claude-code", 2), ("codex", 2), ("qwen-code", 3)] {
        assert_eq!(run_view("t", None, &agent_hops(agent)).steps.len(), turns);
    }
}

/// A hop of the given request body and path, beside an agent's run.
fn extra_hop(id: &str, path: &str, request: &[u8], response: &[u8], at: i64) -> RecordedHop {
    let id = format!("{id:0>32}");
    RecordedHop {
        read: Default::default(),
        start: HopStart {
            id: id.clone(),
            route: "model".into(),
            role: Role::Model,
            transport: Transport::Http,
            peer: "127.0.0.1:40000".into(),
            method: "POST".into(),
            path: path.into(),
            url: format!("http://127.0.0.1:9{path}"),
            request_headers: vec![tracer_wire::hop::Header::new(
                "content-type",
                "application/json",
            )],
            started_unix_ns: at,
            run_id: None,
        },
        end: Some(HopEnd {
            id,
            state: Some(HopState::Complete),
            status: Some(200),
            request_body: BodyCapture::whole(request.to_vec()),
            response_body: BodyCapture::whole(response.to_vec()),
            response_ended_unix_ns: Some(at + 30_000_000),
            ..HopEnd::default()
        }),
    }
}

#[test]
fn claude_codes_title_call_and_codex_telemetry_are_side_calls() {
    let mut hops = agent_hops("claude-code");
    let first = hop_of(&hops, "claude-code", "turn1_request.json").clone();
    // Claude Code's Haiku title request: its JSON answer format, no tools, the user's text.
    let title = serde_json::json!({
        "model": "claude-haiku-4-5",
        "max_tokens": 512,
        "system": [{"type": "text", "text": "Generate a concise, sentence-case title (3-7 words) for this coding session."}],
        "messages": [{"role": "user", "content": WORDS}],
        "tools": [],
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {"title": {"type": "string"}}}}},
        "stream": false
    });
    let answer = serde_json::json!({
        "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "{\"title\":\"Add milk to notes\"}"}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 90, "output_tokens": 9}
    });
    let at = first.start.started_unix_ns - 50_000_000;
    let side = extra_hop(
        "a1",
        "/v1/messages?beta=true",
        title.to_string().as_bytes(),
        answer.to_string().as_bytes(),
        at,
    );
    let otlp = std::fs::read(agent_dir("codex").join("otlp/metrics_response.json")).unwrap();
    let telemetry = extra_hop("a2", "/otlp/v1/metrics", b"{}", &otlp, at + 1);
    hops.push(side.clone());
    hops.push(telemetry.clone());
    let readings: Vec<_> = hops.iter().map(RecordedHop::reading).collect();
    let conversations = Conversations::of_trace(&hops, &readings);
    assert_eq!(
        conversations.side_call(hops.len() - 2),
        Some(SideCall::Title)
    );
    assert_eq!(
        conversations.side_call(hops.len() - 1),
        Some(SideCall::Telemetry)
    );
    assert_eq!(summarize(&hops).title.as_deref(), Some(WORDS));
    let inputs: Vec<_> = hops.iter().map(RecordedHop::trace_input).collect();
    assert_eq!(inputs[hops.len() - 2].title_text, None);
    let view = run_view("t", None, &hops);
    assert_eq!(view.steps.len(), 2);
    assert!(view.steps.iter().all(|s| s.hop_id != side.start.id));
}

#[test]
fn every_tool_call_is_linked_to_the_call_that_ran_it() {
    for (agent, turn, asked_as) in [
        ("claude-code", "turn1_request.json", "mcp__notes__append"),
        ("codex", "turn1_request.json", "append"),
        ("gemini-cli", "turn1_request.json", "mcp_notes_append"),
        ("opencode", "turn1_request.json", "notes_append"),
        ("qwen-code", "turn2_request.json", "mcp__notes__append"),
    ] {
        let hops = agent_hops(agent);
        let asking = hop_of(&hops, agent, turn);
        let ran = hop_of(&hops, agent, "mcp_tools_call_request.json");
        let messages = explain_trace(&hops);
        let answer = message(&messages, asking, Direction::Response);
        let call = message(&messages, ran, Direction::Request);
        assert_eq!(answer.links, [call.number], "{agent}");
        assert_eq!(call.links, [answer.number], "{agent}");
        let by = if asked_as == "append" {
            String::new()
        } else {
            format!(" as {asked_as}")
        };
        assert!(
            call.summary
                .ends_with(&format!("asked for in message {}{by}", answer.number)),
            "{agent}: {}",
            call.summary
        );
        assert!(
            answer
                .summary
                .ends_with(&format!("run in message {}", call.number)),
            "{agent}: {}",
            answer.summary
        );
        // diff, rerun and eval read the same link.
        let view = run_view("t", None, &hops);
        let step = view
            .steps
            .iter()
            .find(|s| s.hop_id == asking.start.id)
            .unwrap();
        assert_eq!(step.calls[0].call.name, asked_as, "{agent}");
        let outcome = step.calls[0].outcome.as_ref().expect("linked");
        assert!(outcome.text.starts_with("Appended a new line"), "{agent}");
        assert!(step.tool_ns > 0 && view.tool_ns() > 0, "{agent}");
    }
}

#[test]
fn diff_of_two_real_runs_links_their_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    for agent in ["claude-code", "opencode", "gemini-cli"] {
        let hops = agent_hops(agent);
        let file = hop_log_file(dir.path(), agent, &hops);
        let diffed = tracer(
            dir.path(),
            &["diff".as_ref(), file.as_os_str(), file.as_os_str()],
        );
        assert!(!diffed.contains("(no tools/call recorded)"), "{diffed}");
        assert!(!diffed.contains("tools 0.0 ms"), "{diffed}");
        assert!(diffed.contains("2 steps"), "{diffed}");
        assert!(diffed.contains("→ ok: \"Appended a new line"), "{diffed}");
        let shown = tracer(dir.path(), &["show".as_ref(), file.as_os_str()]);
        assert!(shown.contains("· asked for in message"), "{shown}");
    }
}

/// A setup trace (the host's MCP start-up, no user request) has one name in every face.
#[test]
fn a_setup_trace_has_one_name_in_replay_and_the_html_index() {
    let setup: Vec<_> = agent_hops("claude-code")
        .into_iter()
        .filter(|hop| hop.start.role == Role::Mcp && hop.trace_input().is_discovery())
        .collect();
    assert!(!setup.is_empty(), "Claude Code's start-up discovery");
    let name = tracer_trace::trace_name(None, None, &setup);
    assert_eq!(name.as_deref(), Some("(start-up discovery)"));
    let replayed = tracer::replay::plain::steps_text(&crate::trace_hops::loaded(
        &"0".repeat(32),
        None,
        setup.clone(),
    ));
    assert!(
        replayed.contains("(start-up discovery)"),
        "replay: {replayed}"
    );
    let index = tracer_export::html::html_index(&[tracer_export::html::IndexEntry {
        file: "t.html".into(),
        id: "0".repeat(32),
        title: None,
        hops: setup,
    }]);
    assert!(index.contains("(start-up discovery)"), "html index");
    assert!(!index.contains("(untitled)"), "html index");
}
