//! A trace as steps (a step: one model call and the tool calls it asked for), read from the
//! recorded hops with the dialect readers: calls, results, replies, message counts, time, tokens.

use serde_json::Value;

use tracer_trace::account::cost::call_cost;
use tracer_trace::read::side_calls::Conversations;
use tracer_trace::read::tool_links::{Asked, ToolNames, pick_run};
use tracer_trace::{RecordedHop, TokenCounts};
use tracer_wire::dialect::{HopReading, JsonRpcKind, ModelRequest, ModelResponse, Reading};
use tracer_wire::hop::{HopState, Role};

pub use super::step_types::{Call, RunView, Step, StepCall, ToolOutcome};

fn duration(hop: &RecordedHop) -> Option<i64> {
    let times = hop.times();
    times.response_ns.map(|end| end - times.request_ns)
}

/// Why a hop has no usable answer, if so.
/// The words of an error answer: `{"error": "…"}`, `{"error": {"message": "…"}}`, else the
/// whole answer.
fn error_text(value: &Value) -> String {
    let error = &value["error"];
    match (error.as_str(), error["message"].as_str()) {
        (Some(text), _) | (None, Some(text)) => text.to_string(),
        _ => format!("it answered {value}"),
    }
}

fn hop_failure(hop: &RecordedHop) -> Option<String> {
    let Some(end) = hop.end.as_ref() else {
        return Some("no answer was recorded".into());
    };
    match end.state {
        Some(HopState::InFlight) | None => Some("still waiting for its answer".into()),
        Some(HopState::Failed | HopState::Aborted) => Some(
            end.error
                .clone()
                .unwrap_or_else(|| "it got no answer".to_string()),
        ),
        Some(HopState::Complete) => end
            .status
            .filter(|status| *status >= 400)
            .map(|status| format!("HTTP {status}")),
    }
}

struct ModelHop<'a> {
    hop: &'a RecordedHop,
    request: Option<&'a ModelRequest>,
    response: Option<&'a ModelResponse>,
}

struct ToolHop<'a> {
    hop: &'a RecordedHop,
    call: Call,
    outcome: ToolOutcome,
    used: bool,
}

fn tool_hop<'a>(hop: &'a RecordedHop, reading: &HopReading) -> Option<ToolHop<'a>> {
    let Reading::Mcp(mcp) = &reading.request.reading else {
        return None;
    };
    let request = mcp.request()?;
    if request.method.as_deref() != Some("tools/call") {
        return None;
    }
    let reply = match reading.response.as_ref().map(|r| &r.reading) {
        Some(Reading::Mcp(mcp)) => mcp.reply().cloned(),
        _ => None,
    };
    let (text, error) = match (&reply, hop_failure(hop)) {
        (Some(r), _) if r.kind == JsonRpcKind::Error => (
            r.error_message.clone().unwrap_or_default(),
            Some("protocol error".to_string()),
        ),
        (Some(r), _) => (
            r.result_text.clone().unwrap_or_default(),
            r.is_error.then(|| "tool error".to_string()),
        ),
        (None, Some(why)) => (why, Some("failed".to_string())),
        (None, None) => (String::new(), None),
    };
    Some(ToolHop {
        hop,
        call: Call {
            name: request.tool_name.clone().unwrap_or_default(),
            arguments: request.arguments.clone().unwrap_or(Value::Null),
        },
        outcome: ToolOutcome {
            text,
            error,
            duration_ns: duration(hop),
        },
        used: false,
    })
}

/// Reads a trace's hops (any order) into steps.
pub fn run_view(trace: &str, title: Option<String>, hops: &[RecordedHop]) -> RunView {
    let mut order: Vec<usize> = (0..hops.len()).collect();
    order.sort_by_key(|&i| hops[i].start.started_unix_ns);
    let ordered: Vec<&RecordedHop> = order.iter().map(|&i| &hops[i]).collect();
    let given: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    // A side call (a title, routing, a token count) is no step of the agent loop.
    let conversations = Conversations::of_trace(hops, &given);
    let names = ToolNames::of_trace(hops, &given);
    let side: Vec<bool> = order
        .iter()
        .map(|&i| conversations.side_call(i).is_some())
        .collect();
    let readings: Vec<HopReading> = order.iter().map(|&i| given[i].clone()).collect();
    let entry = ordered.iter().position(|hop| hop.start.role == Role::Agent);
    let mut models = Vec::new();
    let mut tools = Vec::new();
    for (index, (hop, reading)) in ordered.iter().zip(&readings).enumerate() {
        if Some(index) == entry || hop.start.role == Role::Agent || side[index] {
            continue;
        }
        if reading.dialect.is_model_chat() {
            models.push(ModelHop {
                hop,
                request: match &reading.request.reading {
                    Reading::ModelRequest(request) => Some(request),
                    _ => None,
                },
                response: match reading.response.as_ref().map(|r| &r.reading) {
                    Some(Reading::ModelResponse(response)) => Some(response),
                    _ => None,
                },
            });
        } else if let Some(tool) = tool_hop(hop, reading) {
            tools.push(tool);
        }
    }
    let mut steps: Vec<Step> = Vec::new();
    for (index, model) in models.iter().enumerate() {
        let from = model.hop.start.started_unix_ns;
        let until = models
            .get(index + 1)
            .map_or(i64::MAX, |next| next.hop.start.started_unix_ns);
        steps.push(step_of(model, &mut tools, from, until, &names));
    }
    if models.is_empty() && !tools.is_empty() {
        // No model hop recorded (only the MCP side was fronted): the calls make one step.
        steps.push(Step {
            hop_id: String::new(),
            model: None,
            messages: 0,
            tools_offered: 0,
            tool_ns: tools.iter().filter_map(|t| t.outcome.duration_ns).sum(),
            calls: tools
                .iter()
                .map(|t| StepCall {
                    call: t.call.clone(),
                    outcome: Some(t.outcome.clone()),
                })
                .collect(),
            content: String::new(),
            model_ns: None,
            tokens: TokenCounts::default(),
            cost: None,
            error: None,
        });
    }
    let (mut reply, mut agent_error, mut step_limit_reached) = (None, None, false);
    if let Some(index) = entry {
        let hop = ordered[index];
        let failure = hop_failure(hop);
        // What the agent itself said went wrong, kept beside the status: "HTTP 502" alone
        // drops the agent's own clear reason.
        let said = match readings[index].response.as_ref().map(|r| &r.reading) {
            Some(Reading::AgentReply(answer)) => {
                reply = Some(answer.reply.clone());
                answer.error.clone()
            }
            Some(Reading::ModelResponse(answer)) => {
                reply = Some(answer.message.content.clone());
                answer.error.clone()
            }
            Some(Reading::Json(value)) => Some(error_text(value)),
            _ => None,
        };
        agent_error = match (failure, said) {
            (Some(status), Some(said)) if status.starts_with("HTTP ") => {
                Some(format!("{status}: {said}"))
            }
            (failure, said) => failure.or(said),
        };
        step_limit_reached = reports_step_limit(hop);
    } else {
        reply = steps.last().map(|s| s.content.clone());
    }
    if !step_limit_reached {
        step_limit_reached = last_call_without_tools(&models);
    }
    let total_ns = match entry {
        Some(index) => duration(ordered[index]),
        None => {
            let start = ordered.first().map(|h| h.start.started_unix_ns);
            let end = ordered.iter().filter_map(|h| h.times().response_ns).max();
            start.zip(end).map(|(s, e)| e - s)
        }
    };
    RunView {
        trace: trace.to_string(),
        title,
        steps,
        reply,
        agent_error,
        step_limit_reached,
        total_ns,
    }
}

fn step_of(
    model: &ModelHop,
    tools: &mut [ToolHop],
    from: i64,
    until: i64,
    names: &ToolNames,
) -> Step {
    let asked: Vec<Call> = model
        .response
        .map(|r| {
            r.message
                .tool_calls
                .iter()
                .map(|c| Call {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let mut calls = Vec::new();
    let mut tool_ns = 0;
    for call in asked {
        let window = |t: &ToolHop| {
            !t.used && t.hop.start.started_unix_ns >= from && t.hop.start.started_unix_ns < until
        };
        // The MCP side names the tool its own way (`append` for `mcp__notes__append`).
        let open: Vec<(&str, &Value, bool)> = tools
            .iter()
            .map(|t| (t.call.name.as_str(), &t.call.arguments, !window(t)))
            .collect();
        let asked = Asked {
            name: &call.name,
            arguments: &call.arguments,
        };
        let found = pick_run(names, asked, &open);
        let outcome = found.map(|i| {
            tools[i].used = true;
            tool_ns += tools[i].outcome.duration_ns.unwrap_or(0);
            tools[i].outcome.clone()
        });
        calls.push(StepCall { call, outcome });
    }
    let response = model.response;
    let error = hop_failure(model.hop).or_else(|| response.and_then(|r| r.error.clone()));
    Step {
        hop_id: model.hop.start.id.clone(),
        model: response
            .and_then(|r| r.model.clone())
            .or_else(|| model.request.and_then(|r| r.model.clone())),
        messages: model.request.map_or(0, |r| r.messages.len()),
        tools_offered: model.request.map_or(0, |r| r.tools.len()),
        calls,
        content: response
            .map(|r| r.message.content.clone())
            .unwrap_or_default(),
        model_ns: duration(model.hop),
        tool_ns,
        tokens: response.map_or_else(TokenCounts::default, |r| TokenCounts::of(&r.usage)),
        cost: Some(call_cost(model.request, response)),
        error,
    }
}

/// The agent's answer says it stopped at its step limit (`"step_limit_reached": true`).
fn reports_step_limit(hop: &RecordedHop) -> bool {
    hop.end
        .as_ref()
        .and_then(|end| serde_json::from_slice::<Value>(&end.response_body.bytes).ok())
        .and_then(|v| v.get("step_limit_reached").and_then(Value::as_bool))
        .unwrap_or(false)
}

/// A host that offered tools on every call, then called once without them, hit its step limit.
fn last_call_without_tools(models: &[ModelHop]) -> bool {
    let offered = |m: &ModelHop| m.request.is_some_and(|r| !r.tools.is_empty());
    match models.split_last() {
        Some((last, earlier)) => {
            !earlier.is_empty() && earlier.iter().all(offered) && !offered(last)
        }
        None => false,
    }
}
