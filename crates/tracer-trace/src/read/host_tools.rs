//! The host's own tools a model called (Claude Code's `Bash`, `Read`, `Edit`, its `Agent`; Qwen
//! Code's `tool_search`): tool calls the host runs itself, with no MCP `tools/call` on the wire,
//! told from the tools each request offered (`tool_origin`).

use super::tool_links::{ToolNames, openapi_operation_tool};
use super::tool_origin::ToolOrigins;
use crate::RecordedHop;
use tracer_wire::dialect::{HopReading, Reading, ToolCallForm};

/// The host's own tools the models of a trace called, in the order first called, each once:
/// a structured call of a tool the request offered as the host's own, that no MCP `tools/call`
/// of the trace runs and that is not an OpenAPI tool server's route (open-webui's
/// `tool_get_phonenumber_post`). `readings[i]` is the reading of `hops[i]`.
pub(crate) fn host_tools_used(hops: &[RecordedHop], readings: &[HopReading]) -> Vec<String> {
    let mut used: Vec<String> = Vec::new();
    for call in host_calls(hops, readings) {
        if !used.contains(&call.name) {
            used.push(call.name);
        }
    }
    used
}

/// One call of a host's own tool: the model hop whose answer asked for it, the tool, its
/// arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct HostToolCall {
    /// The index, in the hops given, of the model hop whose answer asked for it.
    pub hop_index: usize,
    pub name: String,
    pub arguments: serde_json::Value,
}

/// Every call of a host's own tool in a trace, in the order asked (`tracer fork` lists those a
/// replay would make the host run again).
pub fn host_tool_calls(hops: &[RecordedHop]) -> Vec<HostToolCall> {
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    host_calls(hops, &readings)
}

fn host_calls(hops: &[RecordedHop], readings: &[HopReading]) -> Vec<HostToolCall> {
    let routes: Vec<&str> = hops.iter().map(|hop| hop.start.route.as_str()).collect();
    let origins = ToolOrigins::of_trace(readings, &routes);
    let names = ToolNames::of_readings(readings, &routes);
    let called: Vec<&str> = readings
        .iter()
        .filter_map(|reading| match &reading.request.reading {
            Reading::Mcp(mcp) => mcp
                .request()
                .filter(|m| m.method.as_deref() == Some("tools/call"))
                .and_then(|m| m.tool_name.as_deref()),
            _ => None,
        })
        .collect();
    let mut order: Vec<usize> = (0..hops.len().min(readings.len())).collect();
    order.sort_by_key(|&i| hops[i].start.started_unix_ns);
    let mut calls = Vec::new();
    for index in order {
        let reading = &readings[index];
        let Reading::ModelRequest(request) = &reading.request.reading else {
            continue;
        };
        let Some(Reading::ModelResponse(reply)) = reading.response.as_ref().map(|r| &r.reading)
        else {
            continue;
        };
        let offered = origins.origin_of_each(&request.tool_defs);
        let host_offered = |name: &str| {
            request.tool_defs.iter().zip(&offered).any(|(def, origin)| {
                origin.is_none() && def.namespace.is_none() && def.name == name
            })
        };
        for call in &reply.message.tool_calls {
            let name = call.name.as_str();
            let host = call.form == ToolCallForm::Structured
                && host_offered(name)
                && !called.iter().any(|tool| names.runs(name, tool))
                && openapi_operation_tool(name).is_none();
            if host {
                calls.push(HostToolCall {
                    hop_index: index,
                    name: name.to_string(),
                    arguments: call.arguments.clone(),
                });
            }
        }
    }
    calls
}
