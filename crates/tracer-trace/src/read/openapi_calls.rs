//! An OpenAPI tool server (mcpo) in a trace: which hops are its REST tool calls (known by the
//! trace's `openapi.json`, or by the `tools/call` each one caused), the `tools/list` a document
//! was built from, the `tools/call` each REST call ran as and the model's call that asked for it
//! (told in words by `explain::openapi_words`).

use serde_json::Value;

use crate::RecordedHop;
use tracer_wire::content_encoding::readable;
use tracer_wire::dialect::{Dialect, HopReading, Reading};
use tracer_wire::hop::{HopState, Role};
use tracer_wire::openapi_tools::{
    RestToolCall, ToolServerDocument, is_document_path, read_call, read_document,
};

/// What a trace says about its OpenAPI tool server hops, per hop index.
#[derive(Debug, Default)]
pub(crate) struct OpenApiTrace {
    pub(crate) documents: Vec<Option<ToolServerDocument>>,
    pub(crate) calls: Vec<Option<RestToolCall>>,
    /// On a document: the `tools/list` hop it was built from.
    pub(crate) built_from: Vec<Option<usize>>,
    /// On a REST call: the `tools/call` hop it ran as; on that hop, the REST call.
    pub(crate) runs_as: Vec<Option<usize>>,
    pub(crate) run_for: Vec<Option<usize>>,
    /// On a REST call: the model hop whose answer asked for it, and the name it asked by.
    pub(crate) asked_by: Vec<Option<(usize, String)>>,
    /// On a model hop: the REST calls that ran what it asked for.
    pub(crate) asks: Vec<Vec<usize>>,
}

fn end_ns(hop: &RecordedHop) -> i64 {
    hop.end
        .as_ref()
        .and_then(|e| e.response_ended_unix_ns.or(e.response_head_unix_ns))
        .unwrap_or(i64::MAX)
}

/// The `tools/call` a hop's request is: (tool name, arguments).
fn tools_call(reading: &HopReading) -> Option<(&str, Value)> {
    let Reading::Mcp(mcp) = &reading.request.reading else {
        return None;
    };
    let message = mcp.request()?;
    (message.method.as_deref() == Some("tools/call")).then(|| {
        let arguments = message.arguments.clone().unwrap_or(Value::Null);
        (message.tool_name.as_deref().unwrap_or_default(), arguments)
    })
}

fn same_arguments(a: &Value, b: &Value) -> bool {
    let empty = |v: &Value| v.is_null() || v.as_object().is_some_and(|o| o.is_empty());
    a == b || (empty(a) && empty(b))
}

impl OpenApiTrace {
    /// Reads a trace's tool server hops, and marks as `openapi.tools` the REST calls that only
    /// the trace tells apart (`readings[i]` the reading of `hops[i]`).
    pub(crate) fn of(hops: &[RecordedHop], readings: &mut [HopReading]) -> Self {
        let count = hops.len().min(readings.len());
        let mut trace = OpenApiTrace {
            documents: vec![None; count],
            calls: vec![None; count],
            built_from: vec![None; count],
            runs_as: vec![None; count],
            run_for: vec![None; count],
            asked_by: vec![None; count],
            asks: vec![Vec::new(); count],
        };
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by_key(|&i| hops[i].start.started_unix_ns);
        for &i in &order {
            let (hop, reading) = (&hops[i], &readings[i]);
            let Some(end) = hop
                .end
                .as_ref()
                .filter(|e| e.state != Some(HopState::InFlight))
            else {
                continue;
            };
            if reading.dialect == Dialect::OpenApiTools && is_document_path(&hop.start.path) {
                let body = readable(&end.response_headers, &end.response_body);
                trace.documents[i] = read_document(&hop.start.path, body.bytes());
            }
        }
        let endpoints: Vec<&str> = trace
            .documents
            .iter()
            .flatten()
            .flat_map(|d| d.tools.iter().map(|t| t.path.as_str()))
            .collect();
        let mcp_calls: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| tools_call(&readings[i]).is_some())
            .collect();
        for &i in &order {
            let hop = &hops[i];
            let candidate = hop.start.role == Role::Other
                && hop.start.method.eq_ignore_ascii_case("POST")
                && matches!(
                    readings[i].dialect,
                    Dialect::Unknown | Dialect::OpenApiTools
                );
            let Some(end) = hop.end.as_ref().filter(|_| candidate) else {
                continue;
            };
            let body = readable(&hop.start.request_headers, &end.request_body);
            let Some(call) = read_call(&hop.start.path, body.bytes()) else {
                continue;
            };
            let (start, until) = (hop.start.started_unix_ns, end_ns(hop));
            let ran = mcp_calls.iter().copied().find(|&j| {
                let at = hops[j].start.started_unix_ns;
                trace.run_for[j].is_none()
                    && at >= start
                    && at <= until
                    && tools_call(&readings[j]).is_some_and(|(name, arguments)| {
                        name == call.tool && same_arguments(&arguments, &call.arguments)
                    })
            });
            let path = hop.start.path.split('?').next().unwrap_or_default();
            let known = endpoints.contains(&path) || ran.is_some();
            if !known && readings[i].dialect != Dialect::OpenApiTools {
                continue;
            }
            readings[i].dialect = Dialect::OpenApiTools;
            if let Some(j) = ran {
                trace.runs_as[i] = Some(j);
                trace.run_for[j] = Some(i);
            }
            trace.calls[i] = Some(call);
        }
        trace.link_lists(hops, readings, &order);
        trace.link_models(hops, readings, &order);
        trace
    }

    /// Each document to the latest `tools/list` before it that listed all of its tools.
    fn link_lists(&mut self, hops: &[RecordedHop], readings: &[HopReading], order: &[usize]) {
        for d in 0..self.documents.len() {
            let Some(document) = &self.documents[d] else {
                continue;
            };
            let at = hops[d].start.started_unix_ns;
            self.built_from[d] = order.iter().rev().copied().find(|&t| {
                let listed = match readings[t].response.as_ref().map(|r| &r.reading) {
                    Some(Reading::Mcp(mcp)) => mcp.reply().map(|m| m.tools.clone()),
                    _ => None,
                };
                hops[t].start.started_unix_ns < at
                    && listed.is_some_and(|names| {
                        !names.is_empty()
                            && document.tools.iter().all(|tool| names.contains(&tool.name))
                    })
            });
        }
    }

    /// Each REST call to the latest model answer before it that asked for the tool by its
    /// name, `tool_<name>_post` (open-webui's naming) or the endpoint's operation id.
    fn link_models(&mut self, hops: &[RecordedHop], readings: &[HopReading], order: &[usize]) {
        let mut used: Vec<(usize, usize)> = Vec::new();
        for &i in order {
            let Some(call) = &self.calls[i] else {
                continue;
            };
            let names = [call.tool.clone(), format!("tool_{}_post", call.tool)];
            let at = hops[i].start.started_unix_ns;
            'models: for &m in order.iter().rev() {
                if hops[m].start.started_unix_ns >= at {
                    continue;
                }
                let Some(Reading::ModelResponse(reply)) =
                    readings[m].response.as_ref().map(|r| &r.reading)
                else {
                    continue;
                };
                for (k, asked) in reply.message.tool_calls.iter().enumerate() {
                    if names.contains(&asked.name) && !used.contains(&(m, k)) {
                        used.push((m, k));
                        self.asked_by[i] = Some((m, asked.name.clone()));
                        self.asks[m].push(i);
                        break 'models;
                    }
                }
            }
        }
    }
}
