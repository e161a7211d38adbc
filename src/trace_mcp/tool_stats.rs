//! `tool_stats`: every tool across traces, its calls, errors and times, who asked for it, and
//! what its definition weighs in context (≈ tokens and dollars), by tool and by MCP server.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::args::Args;
use super::listing::SCAN_LIMIT;
use super::{TraceServer, answer, db_error};
use tracer_trace::account::cost::dollars;
use tracer_trace::account::prices;
use tracer_trace::account::tokens::thousands;
use tracer_trace::account::tool_context::{ToolContext, tool_context};
use tracer_trace::words::{human_duration, plural};
use tracer_wire::dialect::{JsonRpcKind, Reading};
use tracer_wire::mcp::CallToolResult;
use tracer_wire::safe_text::one_line;

impl TraceServer {
    pub(super) async fn tool_stats(
        &self,
        args: &Args<'_>,
        now: i64,
    ) -> Result<CallToolResult, String> {
        let since = args.since("since", now)?;
        let rows = self.store.traces().await.map_err(db_error)?;
        let mut stats: BTreeMap<String, ToolStat> = BTreeMap::new();
        let (mut scanned, mut stopped) = (0, false);
        for row in rows
            .iter()
            .filter(|r| since.is_none_or(|s| r.started_unix_ns >= s))
        {
            if scanned == SCAN_LIMIT {
                stopped = true;
                break;
            }
            scanned += 1;
            let hops = self.hops(&row.id).await?;
            for offered in tool_context(&hops, prices::active()) {
                let stat = stats.entry(offered.name.clone()).or_default();
                stat.server = stat.server.take().or(offered.server.clone());
                stat.context.add(&offered);
            }
            for hop in hops {
                let reading = hop.reading();
                let response = reading.response.as_ref().map(|r| &r.reading);
                if let Reading::Mcp(mcp) = &reading.request.reading
                    && let Some(call) = mcp.request()
                    && call.method.as_deref() == Some("tools/call")
                    && let Some(name) = &call.tool_name
                {
                    let stat = stats.entry(name.clone()).or_default();
                    stat.calls += 1;
                    let end = hop.end.as_ref();
                    if let Some(ended) = end.and_then(|e| e.response_ended_unix_ns) {
                        stat.times_ns.push(ended - hop.start.started_unix_ns);
                    }
                    if let Some(Reading::Mcp(reply)) = response
                        && let Some(reply) = reply.reply()
                    {
                        match reply.kind {
                            JsonRpcKind::Error => stat.protocol_errors += 1,
                            _ if reply.is_error => stat.tool_errors += 1,
                            _ => {}
                        }
                    }
                }
                if let Some(Reading::ModelResponse(answer)) = response {
                    let model = answer
                        .model
                        .clone()
                        .or_else(|| match &reading.request.reading {
                            Reading::ModelRequest(request) => request.model.clone(),
                            _ => None,
                        });
                    for call in &answer.message.tool_calls {
                        let stat = stats.entry(call.name.clone()).or_default();
                        stat.asked += 1;
                        let model = model.clone().unwrap_or_else(|| "(unnamed model)".into());
                        if !stat.models.contains(&model) {
                            stat.models.push(model);
                        }
                    }
                }
            }
        }
        let mut ordered: Vec<(String, ToolStat)> = stats.into_iter().collect();
        ordered.sort_by(|a, b| {
            (b.1.calls, b.1.asked)
                .cmp(&(a.1.calls, a.1.asked))
                .then(b.1.context.bytes.cmp(&a.1.context.bytes))
                .then(a.0.cmp(&b.0))
        });
        let lines: Vec<String> = ordered.iter().map(|(name, stat)| stat.line(name)).collect();
        let structured: Vec<Value> = ordered.iter().map(|(name, stat)| stat.json(name)).collect();
        let servers = by_server(&ordered);
        let text = if lines.is_empty() {
            "No tool was called, asked for or offered in the traces read.".to_owned()
        } else {
            let server_lines: Vec<String> = servers.iter().map(ServerStat::line).collect();
            format!(
                "{} over {}{}:\n{}\nTool definitions by origin (≈ tokens are shares of each call's reported prompt; ≈ $ of its prompt's cost, {}):\n{}\nNext: list_traces with tool=NAME for the traces that used one.",
                plural(lines.len(), "tool"),
                if stopped { "the newest " } else { "" },
                plural(scanned, "trace"),
                lines.join("\n"),
                tracer_trace::account::cost::estimate_label(),
                server_lines.join("\n")
            )
        };
        Ok(answer(
            text,
            json!({
                "tools": structured,
                "servers": servers.iter().map(ServerStat::json).collect::<Vec<_>>(),
                "prices": tracer_trace::account::cost::estimate_label(),
                "traces_read": scanned,
            }),
        ))
    }
}

/// What one tool's calls add up to.
#[derive(Debug, Default)]
struct ToolStat {
    calls: usize,
    tool_errors: usize,
    protocol_errors: usize,
    times_ns: Vec<i64>,
    /// Tool calls a model answer asked for (run or not).
    asked: usize,
    models: Vec<String>,
    /// The MCP server its definition came from (None: the host's own, or never offered).
    server: Option<String>,
    /// What its definition weighed in the model requests that offered it.
    context: ContextWeight,
}

/// A definition's weight in context, summed over requests.
#[derive(Debug, Default, Clone)]
struct ContextWeight {
    requests: usize,
    bytes: usize,
    tokens: u64,
    usd: f64,
    unpriced: usize,
}

impl ContextWeight {
    fn add(&mut self, offered: &ToolContext) {
        self.requests += offered.requests;
        self.bytes += offered.bytes;
        self.tokens += offered.tokens;
        self.usd += offered.usd;
        self.unpriced += offered.unpriced;
    }

    fn add_weight(&mut self, other: &ContextWeight) {
        self.requests = self.requests.max(other.requests);
        self.bytes += other.bytes;
        self.tokens += other.tokens;
        self.usd += other.usd;
        self.unpriced = self.unpriced.max(other.unpriced);
    }

    /// `≈ 1,234 tokens over 4 requests (≈ $0.0123)`; `at least` when a request was unpriced.
    fn text(&self) -> String {
        let priced = self.requests.saturating_sub(self.unpriced);
        let money = match (priced, self.unpriced) {
            (0, _) => "cost unknown".to_owned(),
            (_, 0) => format!("≈ {}", dollars(self.usd)),
            _ => format!("at least {}", dollars(self.usd)),
        };
        format!(
            "≈ {} tokens over {} ({money})",
            thousands(self.tokens),
            plural(self.requests, "request")
        )
    }

    fn json(&self) -> Value {
        let priced = self.requests.saturating_sub(self.unpriced);
        json!({
            "requests": self.requests,
            "bytes": self.bytes,
            "approx_tokens": self.tokens,
            "approx_usd": (priced > 0).then_some(self.usd),
            "unpriced_requests": self.unpriced,
        })
    }
}

/// The tools of one origin (an MCP server, or the host) and their weight in context.
struct ServerStat {
    /// None: the host's own tools.
    server: Option<String>,
    tools: usize,
    /// Times a model asked for one of them.
    asked: usize,
    context: ContextWeight,
}

impl ServerStat {
    fn name(&self) -> String {
        match &self.server {
            Some(server) => format!("{} (mcp)", one_line(server)),
            None => "the host's own".to_owned(),
        }
    }

    fn line(&self) -> String {
        format!(
            "{}: {}, asked for {}, definitions {}",
            self.name(),
            plural(self.tools, "tool"),
            plural(self.asked, "time"),
            self.context.text()
        )
    }

    fn json(&self) -> Value {
        json!({
            "server": self.server,
            "tools": self.tools,
            "asked": self.asked,
            "context": self.context.json(),
        })
    }
}

/// The offered tools grouped by origin, the heaviest first; a tool never offered in a recorded
/// request (an MCP server's own name of it, `append`) is in no group.
fn by_server(stats: &[(String, ToolStat)]) -> Vec<ServerStat> {
    let mut out: Vec<ServerStat> = Vec::new();
    for (_, stat) in stats.iter().filter(|(_, s)| s.context.requests > 0) {
        let at = match out.iter().position(|s| s.server == stat.server) {
            Some(at) => at,
            None => {
                out.push(ServerStat {
                    server: stat.server.clone(),
                    tools: 0,
                    asked: 0,
                    context: ContextWeight::default(),
                });
                out.len() - 1
            }
        };
        let group = &mut out[at];
        group.tools += 1;
        group.asked += stat.asked;
        group.context.add_weight(&stat.context);
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.context.bytes));
    out
}

impl ToolStat {
    /// The nearest-rank percentile of the call times.
    fn percentile(&self, p: f64) -> Option<i64> {
        let mut times = self.times_ns.clone();
        times.sort_unstable();
        let rank = ((p / 100.0) * times.len() as f64).ceil() as usize;
        times.get(rank.saturating_sub(1)).copied()
    }

    fn line(&self, name: &str) -> String {
        let time = |p| self.percentile(p).map_or("-".to_owned(), human_duration);
        let models = if self.models.is_empty() {
            "no model asked for it".to_owned()
        } else {
            format!("asked for by {}", self.models.join(", "))
        };
        let context = if self.context.requests == 0 {
            String::new()
        } else {
            format!(", definition {}", self.context.text())
        };
        format!(
            "{}: {}, {}, {}, p50 {}, p95 {}, {models}{context}",
            one_line(name),
            plural(self.calls, "call"),
            plural(self.tool_errors, "tool error"),
            plural(self.protocol_errors, "protocol error"),
            time(50.0),
            time(95.0),
        )
    }

    fn json(&self, name: &str) -> Value {
        let ms = |p| self.percentile(p).map(|ns| ns as f64 / 1e6);
        json!({
            "tool": name,
            "calls": self.calls,
            "tool_errors": self.tool_errors,
            "protocol_errors": self.protocol_errors,
            "p50_ms": ms(50.0),
            "p95_ms": ms(95.0),
            "asked_by_models": self.models,
            "asked": self.asked,
            "server": self.server,
            "context": self.context.json(),
        })
    }
}
