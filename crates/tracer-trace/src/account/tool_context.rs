//! What each offered tool costs in context: its definition's bytes in every model request that
//! carried it, its ≈ share of the prompt tokens those calls reported, and of their prompt's cost.

use super::cost::{HopCost, price_call};
use super::prices::PriceTable;
use crate::RecordedHop;
use crate::read::conversation_pairs::model_calls;
use crate::read::explain_context::ExplainContext;
use tracer_wire::dialect::{HopReading, Reading, Usage};

/// One tool's weight in the context of the model requests that offered it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolContext {
    /// The name the model saw (`mcp__notes__append`).
    pub name: String,
    /// The MCP server it came from, matched to that server's `tools/list` on the wire; None for
    /// the host's own tools.
    pub server: Option<String>,
    /// Model requests that carried its definition.
    pub requests: usize,
    /// Its definition's bytes, summed over those requests.
    pub bytes: usize,
    /// ≈ tokens: in each request, the reported prompt × its bytes ÷ the request's bytes; summed
    /// over the requests that reported a prompt.
    pub tokens: u64,
    /// ≈ dollars: in each priced request, the prompt's cost (the call priced with its output
    /// left out) × the same share.
    pub usd: f64,
    /// Requests that offered it whose prompt could not be priced (unknown model, no usage).
    pub unpriced: usize,
}

/// Every tool offered by a trace's model requests, in the order first offered.
pub fn tool_context(hops: &[RecordedHop], table: &PriceTable) -> Vec<ToolContext> {
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let context = ExplainContext::of_trace(hops, &readings);
    let mut out: Vec<ToolContext> = Vec::new();
    for call in model_calls(hops, &readings) {
        let defs = &call.request.tool_defs;
        if defs.is_empty() {
            continue;
        }
        let total = call.request.body_bytes.max(1);
        let prompt = call.usage.and_then(Usage::prompt_total);
        let reply_model = match readings[call.index].response.as_ref().map(|r| &r.reading) {
            Some(Reading::ModelResponse(reply)) => reply.model.as_deref(),
            _ => None,
        };
        let models = [call.request.model.as_deref(), reply_model];
        let prompt_usage = call.usage.map(|usage| Usage {
            output_tokens: None,
            reasoning_tokens: None,
            ..*usage
        });
        let prompt_usd = match price_call(table, &models, prompt_usage.as_ref()) {
            HopCost::Priced { usd, .. } => Some(usd),
            HopCost::Unknown(_) => None,
        };
        let servers = context.origins.origin_of_each(defs);
        for (def, server) in defs.iter().zip(servers) {
            let share = def.bytes as f64 / total as f64;
            let at = match out.iter().position(|t| t.name == def.name) {
                Some(at) => at,
                None => {
                    out.push(ToolContext {
                        name: def.name.clone(),
                        server: server.clone(),
                        ..ToolContext::default()
                    });
                    out.len() - 1
                }
            };
            let tool = &mut out[at];
            if tool.server.is_none() {
                tool.server = server;
            }
            tool.requests += 1;
            tool.bytes += def.bytes;
            if let Some(prompt) = prompt {
                tool.tokens += (prompt as f64 * share).round() as u64;
            }
            match prompt_usd {
                Some(usd) => tool.usd += usd * share,
                None => tool.unpriced += 1,
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::context_shares::tests::claude_code_run;

    #[test]
    fn claude_codes_tools_weigh_their_share_and_the_notes_servers_are_its_own() {
        let hops = claude_code_run();
        let table = PriceTable::parse(
            r#"{"claude-opus-4-8": {"input_cost_per_token": 0.001, "output_cost_per_token": 1.0}}"#,
            "test",
        )
        .unwrap();
        let tools = tool_context(&hops, &table);
        assert_eq!(tools.len(), 29, "{tools:?}");
        let notes: Vec<&ToolContext> = tools
            .iter()
            .filter(|t| t.server.as_deref() == Some("notes"))
            .collect();
        assert_eq!(notes.len(), 5, "{notes:?}");
        assert!(notes.iter().all(|t| t.name.starts_with("mcp__notes__")));
        // Both recorded turns offered every tool.
        assert!(tools.iter().all(|t| t.requests == 2 && t.unpriced == 0));
        // Each tool's ≈ tokens and dollars are its bytes' share of each call's prompt, and of
        // the prompt's cost alone: $1 a token of output would dwarf every tool otherwise.
        let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
        let mut expect_tokens = 0.0;
        let mut expect_usd = 0.0;
        let append = tools
            .iter()
            .find(|t| t.name == "mcp__notes__append")
            .unwrap();
        for reading in &readings[1..] {
            let (Reading::ModelRequest(request), Some(Reading::ModelResponse(reply))) = (
                &reading.request.reading,
                reading.response.as_ref().map(|r| &r.reading),
            ) else {
                panic!("a model call");
            };
            let def = request
                .tool_defs
                .iter()
                .find(|d| d.name == append.name)
                .unwrap();
            let share = def.bytes as f64 / request.body_bytes as f64;
            let prompt = reply.usage.prompt_total().unwrap() as f64;
            expect_tokens += (prompt * share).round();
            let uncached = reply.usage.input_tokens.unwrap_or(0) as f64;
            let cached = (reply.usage.cache_read_tokens.unwrap_or(0)
                + reply.usage.cache_write_tokens.unwrap_or(0)) as f64;
            // No cache prices in this table: cache reads and writes cost the input price.
            expect_usd += (uncached + cached) * 0.001 * share;
        }
        assert_eq!(append.tokens as f64, expect_tokens);
        assert!(append.tokens > 0);
        assert!(
            (append.usd - expect_usd).abs() < 1e-9,
            "{append:?} {expect_usd}"
        );
        let unpriced = tool_context(&hops, &PriceTable::parse("{}", "empty").unwrap());
        assert!(unpriced.iter().all(|t| t.unpriced == 2 && t.usd == 0.0));
    }
}
