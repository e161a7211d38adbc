//! `tracer run` turns the real agents' own OpenTelemetry on, pointed at its receiver: Claude Code
//! (from npm, offline against the scripted upstream) runs a turn that asks for a host-run `Bash
//! echo hello` and the notes server's `append`; every record it exported is stored, the permission
//! decision and the local run are placed between the model's ask and the next request, its own
//! cost sits beside tracer's, and a user's own OTLP collector still gets every request.

use serde_json::Value;

use super::run_agents::{Agent, CLAUDE, CODEX, GEMINI, Traced, run};

#[test]
fn claude_codes_own_account_is_joined_to_the_wire() {
    let dump = tempfile::tempdir().unwrap();
    let dump_dir = dump.path().join("user-collector");
    let flags = [
        "--shell-first",
        "--user-otlp-dump",
        dump_dir.to_str().unwrap(),
    ];
    let Some(run) = run(&CLAUDE, &flags) else {
        return;
    };
    let s = &run.summary;
    assert_eq!(s["exit_code"], 0, "{s:#}");
    assert_eq!(s["notes"], "buy milk\n", "{s:#}");
    let stderr = s["stderr"].as_str().unwrap();
    let first = stderr
        .lines()
        .find(|l| l.starts_with("tracer run: recording"))
        .unwrap();
    assert!(
        first.contains("Claude Code's own telemetry on, to tracer"),
        "{stderr}"
    );

    // Every record received was stored; the user's collector got every request.
    let line = stderr
        .lines()
        .find(|l| l.contains("the agent's own telemetry:"))
        .unwrap_or_else(|| panic!("no telemetry line: {stderr}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let (received, requests, stored) = (numbers[0], numbers[1], numbers[2]);
    assert!(received >= 10, "{line}");
    assert_eq!(received, stored, "{line}");
    let db = rusqlite_count(&run.db, "select count(*) from agent_events");
    assert_eq!(db, stored, "{line}");
    assert!(requests > 0, "{line}");
    assert_eq!(records_passed_on(&dump_dir), received, "{line}");

    // The trace that ran Bash and append: its events in order between the hops.
    let traces = run.tracer(&["ls"]);
    let trace = traces
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["title"].as_str().is_some_and(|t| t.contains("buy milk")))
        .unwrap_or_else(|| panic!("{traces:#}"));
    let id = trace["id"].as_str().unwrap();
    let log = run.tracer(&["show", id]);
    let errors: Vec<String> = super::hop_log::schema_validator()
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the hop log breaks its schema: {errors:#?}"
    );
    assert_eq!(log["version"], 6);
    let events = log["agent_events"].as_array().unwrap_or_else(|| {
        let rows = sqlite_rows(&run.db, "select signal, name, time_unix_ns, session_key, tool_call_key, request_key, run_id from agent_events");
        let hops = sqlite_rows(&run.db, "select id, request_started_unix_ns, trace_id, run_id from hops order by request_started_unix_ns");
        let sessions = sqlite_rows(&run.db, "select * from sessions");
        panic!("no agent_events in {id}:\n{rows}\n{hops}\n{sessions}")
    });
    let messages = log["messages"].as_array().unwrap();
    let named = |name: &str, tool: &str| {
        events
            .iter()
            .find(|e| {
                e["name"].as_str().unwrap().ends_with(name)
                    && e["attributes"]["tool_name"].as_str() == Some(tool)
            })
            .unwrap_or_else(|| panic!("no {name} of {tool}: {events:#?}"))
    };
    let decision = named("tool_decision", "Bash");
    let ran = named("tool_result", "Bash");
    assert_eq!(decision["rule"], "tool call id", "{decision:#}");
    assert_eq!(ran["rule"], "tool call id", "{ran:#}");
    assert!(
        ran["sentence"]
            .as_str()
            .unwrap()
            .contains("ran Bash `echo hello` itself: success"),
        "{ran:#}"
    );
    // The answer that asked for Bash comes before them, and the request that carries its result after.
    let asked = messages
        .iter()
        .find(|m| {
            m["direction"] == "←"
                && m["summary"]
                    .as_str()
                    .unwrap()
                    .contains("asks for tool Bash")
        })
        .unwrap_or_else(|| {
            let short: Vec<String> = messages
                .iter()
                .map(|m| {
                    format!(
                        "{} {} {} | {}",
                        m["number"],
                        m["direction"],
                        m["summary"],
                        m["explanation"]
                            .as_str()
                            .unwrap()
                            .chars()
                            .take(150)
                            .collect::<String>()
                    )
                })
                .collect();
            panic!("{short:#?}\n{events:#?}")
        });
    let asked_at = asked["number"].as_u64().unwrap();
    for event in [decision, ran] {
        let after = event["after_message"].as_u64().unwrap();
        assert!(after >= asked_at, "{event:#} after {asked:#}");
        let next_request = messages.iter().find(|m| {
            m["number"].as_u64().unwrap() > after
                && m["direction"] == "→"
                && m["path"].as_str().unwrap().contains("/v1/messages")
        });
        assert!(next_request.is_some(), "no model request after {event:#}");
    }
    let mcp = events
        .iter()
        .find(|e| {
            e["name"].as_str().unwrap().ends_with("tool_result")
                && e["attributes"]["tool_name"].as_str() != Some("Bash")
        })
        .unwrap_or_else(|| panic!("no MCP tool_result: {events:#?}"));
    assert!(
        mcp["sentence"].as_str().unwrap().contains("over MCP"),
        "{mcp:#}"
    );
    // Claude Code's own cost of each call, beside tracer's estimate.
    let costs: Vec<&Value> = events
        .iter()
        .filter(|e| e["cost_check"].is_string())
        .collect();
    assert!(!costs.is_empty(), "{events:#?}");
    for cost in &costs {
        assert_eq!(cost["rule"], "request id", "{cost:#}");
    }

    // `tracer show` (text) puts them among the numbered messages.
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["show", id, "--joins", "--db"])
        .arg(&run.db)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let decided = text
        .find("configuration accepted Bash")
        .unwrap_or_else(|| panic!("{text}"));
    let local = text
        .find("ran Bash `echo hello` itself")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(decided < local, "{text}");
    assert!(text.contains("placed by tool call id"), "{text}");
    eprintln!("{text}");
}

fn rusqlite_count(db: &std::path::Path, sql: &str) -> u64 {
    let out = std::process::Command::new("sqlite3")
        .arg(db)
        .arg(sql)
        .output()
        .expect("sqlite3");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// The records of Claude Code's requests a user's collector got (tracer's own spans, which go to
/// the same collector, left out).
fn records_passed_on(dir: &std::path::Path) -> u64 {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use prost::Message;
    let service = |r: &Option<Resource>| {
        let attrs = r.as_ref().map(|r| r.attributes.clone()).unwrap_or_default();
        attrs
            .iter()
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| kv.value.clone())
            .map(|v| format!("{:?}", v.value))
            .unwrap_or_default()
    };
    let index = std::fs::read_to_string(dir.join("index.jsonl")).unwrap_or_default();
    let mut count = 0u64;
    for line in index.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let body = std::fs::read(dir.join(entry["file"].as_str().unwrap())).unwrap();
        assert!(
            entry["content_type"].as_str().unwrap().contains("protobuf"),
            "{entry}"
        );
        match entry["path"].as_str().unwrap() {
            "/v1/logs" => {
                let r = ExportLogsServiceRequest::decode(body.as_slice()).unwrap();
                for rl in r
                    .resource_logs
                    .iter()
                    .filter(|rl| !service(&rl.resource).contains("\"tracer\""))
                {
                    count += rl
                        .scope_logs
                        .iter()
                        .map(|s| s.log_records.len() as u64)
                        .sum::<u64>();
                }
            }
            "/v1/traces" => {
                let r = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
                for rs in r
                    .resource_spans
                    .iter()
                    .filter(|rs| !service(&rs.resource).contains("\"tracer\""))
                {
                    count += rs
                        .scope_spans
                        .iter()
                        .map(|s| s.spans.len() as u64)
                        .sum::<u64>();
                }
            }
            "/v1/metrics" => {
                let r = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap();
                for rm in r
                    .resource_metrics
                    .iter()
                    .filter(|rm| !service(&rm.resource).contains("\"tracer\""))
                {
                    for m in rm.scope_metrics.iter().flat_map(|s| s.metrics.iter()) {
                        count += match &m.data {
                            Some(Data::Sum(s)) => s.data_points.len(),
                            Some(Data::Gauge(g)) => g.data_points.len(),
                            Some(Data::Histogram(h)) => h.data_points.len(),
                            Some(Data::ExponentialHistogram(h)) => h.data_points.len(),
                            Some(Data::Summary(s)) => s.data_points.len(),
                            None => 0,
                        } as u64;
                    }
                }
            }
            other => panic!("{other}"),
        }
    }
    count
}

fn sqlite_rows(db: &std::path::Path, sql: &str) -> String {
    let out = std::process::Command::new("sqlite3")
        .arg(db)
        .arg(sql)
        .output()
        .expect("sqlite3");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The run's telemetry line: (received, requests, stored), every record stored.
fn telemetry_counts(run: &Traced) -> (u64, u64, u64) {
    let stderr = run.summary["stderr"].as_str().unwrap();
    let line = stderr
        .lines()
        .find(|l| l.contains("the agent's own telemetry:"))
        .unwrap_or_else(|| panic!("no telemetry line: {stderr}"));
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(n[0], n[2], "{line}");
    assert_eq!(
        rusqlite_count(&run.db, "select count(*) from agent_events"),
        n[2],
        "{line}"
    );
    (n[0], n[1], n[2])
}

/// The buy-milk trace's hop log, checked against the schema.
fn buy_milk_log(run: &Traced) -> Value {
    let traces = run.tracer(&["ls"]);
    let trace = traces
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tools_used"].as_array().is_some_and(|t| !t.is_empty()))
        .unwrap_or_else(|| panic!("{traces:#}"));
    let log = run.tracer(&["show", trace["id"].as_str().unwrap()]);
    let errors: Vec<String> = super::hop_log::schema_validator()
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the hop log breaks its schema: {errors:#?}"
    );
    log
}

fn other_agent_account(agent: &Agent, name: &str, tool_event: &str) -> Option<Vec<Value>> {
    let run = run(agent, &["--shell-first"])?;
    let s = &run.summary;
    assert_eq!(s["exit_code"], 0, "{s:#}");
    assert_eq!(s["notes"], "buy milk\n", "{s:#}");
    let stderr = s["stderr"].as_str().unwrap();
    assert!(
        stderr.contains(&format!("{name}'s own telemetry on, to tracer")),
        "{stderr}"
    );
    let (received, _, _) = telemetry_counts(&run);
    assert!(received > 0);
    let log = buy_milk_log(&run);
    let events = log["agent_events"].as_array().cloned().unwrap_or_default();
    let tool = events
        .iter()
        .find(|e| e["name"] == tool_event)
        .unwrap_or_else(|| panic!("no {tool_event} placed: {events:#?}"));
    assert!(tool["after_message"].is_u64(), "{tool:#}");
    Some(events)
}

#[test]
fn codexs_own_account_is_joined_by_call_id_and_session() {
    let Some(events) = other_agent_account(&CODEX, "Codex CLI", "codex.tool_result") else {
        return;
    };
    let rule_of = |name: &str| {
        let event = events.iter().find(|e| e["name"] == name);
        event.map(|e| e["rule"].as_str().unwrap().to_string())
    };
    assert_eq!(
        rule_of("codex.tool_result").as_deref(),
        Some("tool call id")
    );
    // Its conversation.id is the wire's session-id header.
    assert_eq!(
        rule_of("codex.user_prompt").as_deref(),
        Some("session and time")
    );
    let ran = events.iter().find(|e| {
        e["name"] == "codex.tool_result" && e["attributes"]["tool_name"] == "exec_command"
    });
    let ran = ran.unwrap_or_else(|| panic!("{events:#?}"));
    assert!(
        ran["sentence"]
            .as_str()
            .unwrap()
            .contains("ran exec_command `echo hello` itself"),
        "{ran:#}"
    );
}

#[test]
fn gemini_clis_own_account_is_joined_by_prompt_and_run() {
    let Some(events) = other_agent_account(&GEMINI, "Gemini CLI", "gemini_cli.tool_call") else {
        return;
    };
    let call = events
        .iter()
        .find(|e| e["name"] == "gemini_cli.tool_call")
        .unwrap();
    assert!(
        call["sentence"].as_str().unwrap().contains("over MCP"),
        "{call:#}"
    );
}
