//! What the trace list shows and filters on for one trace, computed from its hops: the summary
//! (`tracer_trace::summarize`) plus the roles, methods, models and statuses that filter tokens match.

use tracer_trace::{RecordedHop, TraceStatus, TraceSummary, summarize};
use tracer_wire::dialect::Reading;

/// One trace's listing line and filterable values (all lower-case).
#[derive(Debug, Clone, PartialEq)]
pub struct TraceFacts {
    pub summary: TraceSummary,
    /// Roles and route names (`mcp`, `notes`).
    pub roles: Vec<String>,
    /// HTTP methods, paths and JSON-RPC methods (`post`, `/api/chat`, `tools/call`).
    pub methods: Vec<String>,
    pub models: Vec<String>,
    /// HTTP statuses (`200`) and the trace status (`ok`, `tool error`).
    pub statuses: Vec<String>,
}

impl TraceFacts {
    pub fn of(hops: &[RecordedHop]) -> Self {
        let summary = summarize(hops);
        let mut facts = TraceFacts {
            roles: Vec::new(),
            methods: Vec::new(),
            models: Vec::new(),
            statuses: vec![summary.status.as_str().to_string()],
            summary,
        };
        for hop in hops {
            push(&mut facts.roles, hop.start.role.as_str());
            push(&mut facts.roles, &hop.start.route);
            push(&mut facts.methods, &hop.start.method);
            push(&mut facts.methods, &hop.start.path);
            if let Some(status) = hop.end.as_ref().and_then(|e| e.status) {
                push(&mut facts.statuses, &status.to_string());
            }
            let reading = hop.reading();
            match &reading.request.reading {
                Reading::ModelRequest(request) => {
                    if let Some(model) = &request.model {
                        push(&mut facts.models, model);
                    }
                }
                Reading::Mcp(mcp) => {
                    if let Some(method) = mcp.request().and_then(|m| m.method.as_deref()) {
                        push(&mut facts.methods, method);
                    }
                }
                _ => {}
            }
        }
        if facts.summary.status != TraceStatus::Ok {
            push(&mut facts.statuses, "error");
        }
        facts
    }

    /// The tools it used: MCP's, then the host's own (`tool:Bash` finds those too).
    pub fn tools(&self) -> Vec<String> {
        let summary = &self.summary;
        (summary.tools_used.iter().chain(&summary.host_tools_used))
            .cloned()
            .collect()
    }
}

fn push(values: &mut Vec<String>, value: &str) {
    let value = value.to_lowercase();
    if !values.contains(&value) {
        values.push(value);
    }
}
