//! `tracer rerun ID --step K --model-url URL`: one recorded model request re-sent (with another
//! model name, or the tool list fetched fresh from an MCP server), tallying the tools it asks for.

use std::convert::Infallible;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::progress::{StopFlag, repeat};
use super::send::post_json;
use super::steps::{Call, RunView};
use super::tally::{TallyRow, tally};
use tracer_live::load::LoadedTrace;
use tracer_reference::agent::McpServerSpec;
use tracer_reference::agent::mcp_client::McpServer;
use tracer_reference::agent::outbound::http_client;
use tracer_wire::dialect::{self, Dialect, Reading};
use tracer_wire::hop::{BodyCapture, Header};
use tracer_wire::mcp::Tool;
use tracer_wire::trace_context::{TraceContext, TraceParent};

#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error("trace {trace} has {count} step(s); --step counts from 1")]
    NoSuchStep { trace: String, count: usize },
    #[error("the model request of step {0} was not recorded whole, so it cannot be re-sent")]
    Incomplete(usize),
    #[error("the model request of step {0} is not a JSON object")]
    NotJson(usize),
    #[error("fetching tools from {url}: {message}")]
    Tools { url: String, message: String },
}

/// A recorded model request made ready to send again.
#[derive(Debug, Clone)]
pub struct StepRequest {
    pub step: usize,
    pub dialect: Dialect,
    pub path: String,
    pub body: Map<String, Value>,
    /// What the model asked for when it was recorded.
    pub recorded: Vec<Call>,
}

impl StepRequest {
    /// Asks another model: the body's `model`, except on Gemini's own paths, where the model is
    /// named in the path (`…/models/NAME:streamGenerateContent`).
    pub fn set_model(&mut self, model: &str) {
        if self.dialect == Dialect::Gemini
            && let Some((head, rest)) = self.path.rsplit_once("models/")
            && let Some((_, method)) = rest.split_once(':')
        {
            self.path = format!("{head}models/{model}:{method}");
            return;
        }
        self.body
            .insert("model".into(), Value::String(model.to_string()));
    }

    /// The model asked: the body's `model`, else the one a Gemini path names.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str).or_else(|| {
            let (_, rest) = self.path.rsplit_once("models/")?;
            rest.split(':').next()
        })
    }
}

/// The recorded request of step `k` (1-based) of `trace`.
pub fn step_request(
    trace: &LoadedTrace,
    view: &RunView,
    k: usize,
) -> Result<StepRequest, StepError> {
    let step = k
        .checked_sub(1)
        .and_then(|i| view.steps.get(i))
        .filter(|s| !s.hop_id.is_empty())
        .ok_or_else(|| StepError::NoSuchStep {
            trace: trace.row.id.clone(),
            count: view.steps.iter().filter(|s| !s.hop_id.is_empty()).count(),
        })?;
    let hop = trace
        .hops
        .iter()
        .find(|h| h.start.id == step.hop_id)
        .ok_or(StepError::Incomplete(k))?;
    let end = hop
        .end
        .as_ref()
        .filter(|e| !e.request_body.truncated)
        .ok_or(StepError::Incomplete(k))?;
    let body: Map<String, Value> =
        serde_json::from_slice(&end.request_body.bytes).map_err(|_| StepError::NotJson(k))?;
    Ok(StepRequest {
        step: k,
        dialect: dialect::detect_hop(&hop.start, Some(end)),
        path: hop.start.path.clone(),
        body,
        recorded: step.calls.iter().map(|c| c.call.clone()).collect(),
    })
}

/// Fetches the tool list from an MCP server (Streamable HTTP).
pub async fn fetch_tools(url: &str, timeout: Duration) -> Result<Vec<Tool>, StepError> {
    let failed = |message: String| StepError::Tools {
        url: url.to_string(),
        message,
    };
    let spec = McpServerSpec::Http {
        url: url.to_string(),
    };
    let server =
        McpServer::new(&spec, http_client(), timeout).map_err(|e| failed(e.to_string()))?;
    let listing = server
        .list_tools(&TraceContext::continue_or_start(None, None))
        .await
        .map_err(|e| failed(e.to_string()))?;
    Ok(listing.tools)
}

/// The tools as the request's dialect declares them.
pub fn tools_for(dialect: Dialect, tools: &[Tool]) -> Value {
    let schema = |t: &Tool| t.input_schema.clone();
    if dialect == Dialect::Gemini {
        let declarations: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({"name": t.name, "description": t.description.clone().unwrap_or_default(),
                    "parameters": schema(t)})
            })
            .collect();
        return json!([{ "functionDeclarations": declarations }]);
    }
    Value::Array(
        tools
            .iter()
            .map(|t| match dialect {
                Dialect::AnthropicMessages => json!({
                    "name": t.name, "description": t.description.clone().unwrap_or_default(),
                    "input_schema": schema(t),
                }),
                _ => json!({"type": "function", "function": {
                    "name": t.name, "description": t.description.clone().unwrap_or_default(),
                    "parameters": schema(t),
                }}),
            })
            .collect(),
    )
}

/// What the model answered once.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAnswer {
    pub calls: Vec<Call>,
    pub content: String,
    pub error: Option<String>,
}

/// Where to send: a base URL gets the recorded path, a URL with a path is used as given.
pub fn target_url(model_url: &str, recorded_path: &str) -> String {
    let trimmed = model_url.trim_end_matches('/');
    let after_scheme = trimmed.split_once("://").map_or(trimmed, |(_, rest)| rest);
    if after_scheme.contains('/') {
        model_url.to_string()
    } else {
        format!("{trimmed}{recorded_path}")
    }
}

/// Sends `request` `times` times to `url` and reads each answer with the dialect reader.
pub async fn resend(
    request: &StepRequest,
    url: &str,
    times: u32,
    timeout: Duration,
    stop: &StopFlag,
) -> Vec<StepAnswer> {
    let body = &serde_json::to_vec(&request.body).unwrap_or_default();
    let answers = repeat(times, "as recorded", stop, move || async move {
        // Each re-sent request opens a trace of its own: through a proxy route it is recorded
        // apart from the trace it came from (without a traceparent, grouping by time would add
        // it to whatever trace was last active).
        let parent = TraceParent::new_root();
        let answer = match post_json(url, body.clone(), Some(&parent), timeout).await {
            Err(error) => StepAnswer {
                calls: Vec::new(),
                content: String::new(),
                error: Some(error.to_string()),
            },
            Ok(answer) => read_answer(
                request.dialect,
                answer.content_type,
                answer.body.to_vec(),
                answer.status,
            ),
        };
        let calls: Vec<String> = answer.calls.iter().map(Call::display).collect();
        let verdict = match &answer.error {
            Some(error) => format!("failed: {error}"),
            None if calls.is_empty() => "no tool call".to_string(),
            None => calls.join(", "),
        };
        let ok = answer.error.is_none() && answer.calls == request.recorded;
        Ok::<_, Infallible>((answer, verdict, ok))
    })
    .await;
    answers.unwrap_or_else(|never| match never {})
}

fn read_answer(
    dialect: Dialect,
    content_type: Option<String>,
    body: Vec<u8>,
    status: u16,
) -> StepAnswer {
    let headers: Vec<Header> = content_type
        .map(|ct| vec![Header::new("content-type", ct)])
        .unwrap_or_default();
    let reading = dialect::read_response(dialect, &headers, &BodyCapture::whole(body.clone()));
    match reading.reading {
        Reading::ModelResponse(response) => StepAnswer {
            calls: response
                .message
                .tool_calls
                .iter()
                .map(|c| Call {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
            content: response.message.content.clone(),
            error: response
                .error
                .clone()
                .or_else(|| (status >= 400).then(|| format!("HTTP {status}"))),
        },
        _ => StepAnswer {
            calls: Vec::new(),
            content: String::new(),
            error: Some(format!(
                "HTTP {status}: {}",
                tracer_trace::words::shorten(&String::from_utf8_lossy(&body), 200)
            )),
        },
    }
}

/// The answers' tally (failed sends left out).
pub fn answer_tally(answers: &[StepAnswer]) -> Vec<TallyRow> {
    let runs: Vec<Vec<Call>> = answers
        .iter()
        .filter(|a| a.error.is_none())
        .map(|a| a.calls.clone())
        .collect();
    tally(&runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(dialect: Dialect, path: &str, body: Value) -> StepRequest {
        StepRequest {
            step: 1,
            dialect,
            path: path.into(),
            body: body.as_object().cloned().unwrap_or_default(),
            recorded: Vec::new(),
        }
    }

    #[test]
    fn another_model_goes_where_the_dialect_names_it() {
        let path = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse";
        let mut gemini = step(Dialect::Gemini, path, json!({"contents": []}));
        assert_eq!(gemini.model(), Some("gemini-3.8-flash"));
        gemini.set_model("gemini-2.5-pro");
        assert_eq!(
            gemini.path,
            "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert!(gemini.body.get("model").is_none());
        let mut code_assist = step(
            Dialect::Gemini,
            "/v1internal:streamGenerateContent?alt=sse",
            json!({"model": "gemini-3-flash", "request": {}}),
        );
        code_assist.set_model("gemini-2.5-pro");
        assert_eq!(code_assist.model(), Some("gemini-2.5-pro"));
        let mut chat = step(
            Dialect::OpenAiChat,
            "/v1/chat/completions",
            json!({"model": "a"}),
        );
        chat.set_model("b");
        assert_eq!(
            (chat.model(), chat.path.as_str()),
            (Some("b"), "/v1/chat/completions")
        );
        let tools = tools_for(Dialect::Gemini, &[]);
        assert_eq!(tools, json!([{"functionDeclarations": []}]));
    }
}
