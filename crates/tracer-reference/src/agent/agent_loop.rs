//! The agent loop: tools/list on every server, then model
//! call → tool calls → results appended → model again with the whole history, until the model
//! answers without tools; after `max_steps` rounds, one last call without tools. Tool errors,
//! protocol errors, bad arguments and invented tools all go back to the model as tool messages.

use std::time::Instant;

use super::config::{AgentConfig, ConfigError};
use super::conversation::{ModelToolCall, ToolResultTurn, Turn, split_thinking};
use super::mcp_client::{McpServer, result_text};
use super::model_client::{AnswerSink, ChatError, ModelClient, ModelReply};
use super::outbound;
use super::toolbox::Toolbox;
use super::upstream_error::UpstreamError;
use tracer_wire::agent_api::{AgentReply, ToolInvocation};
use tracer_wire::mcp::ResultType;
use tracer_wire::trace_context::TraceContext;

/// Why a run produced no reply.
#[derive(Debug)]
pub(crate) enum RunError {
    Upstream(UpstreamError),
    /// Whoever was receiving the streamed answer went away.
    ClientGone,
}

impl From<ChatError> for RunError {
    fn from(error: ChatError) -> Self {
        match error {
            ChatError::Upstream(error) => RunError::Upstream(error),
            ChatError::SinkClosed => RunError::ClientGone,
        }
    }
}

impl From<UpstreamError> for RunError {
    fn from(error: UpstreamError) -> Self {
        RunError::Upstream(error)
    }
}

/// A finished run: the reply, and token counts summed over the model calls.
#[derive(Debug, Clone)]
pub(crate) struct RunOutput {
    pub reply: AgentReply,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// The agent: one model client and the MCP servers, shared by all requests.
pub struct Agent {
    model: ModelClient,
    servers: Vec<McpServer>,
    max_steps: u32,
    system_prompt: Option<String>,
}

impl Agent {
    /// Checks the configuration; connects to nothing (connections are made per request).
    pub fn new(config: &AgentConfig) -> Result<Self, ConfigError> {
        let http = outbound::http_client();
        let model = ModelClient::new(config, http.clone())?;
        let servers = config
            .mcp_servers
            .iter()
            .map(|spec| McpServer::new(spec, http.clone(), config.mcp_timeout))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            model,
            servers,
            max_steps: config.max_steps,
            system_prompt: config.system_prompt.clone().filter(|p| !p.is_empty()),
        })
    }

    pub(crate) fn model(&self) -> &ModelClient {
        &self.model
    }

    /// Stops the stdio MCP servers politely (stdin closed, then killed after `grace`).
    pub async fn shutdown(&self, grace: std::time::Duration) {
        for server in &self.servers {
            server.shutdown(grace).await;
        }
    }

    /// Runs the loop over `conversation` (user and earlier assistant turns; the system prompt is
    /// added here). With a sink, the model is streamed and answer text goes out as it comes.
    pub(crate) async fn run(
        &self,
        conversation: Vec<Turn>,
        trace: &TraceContext,
        mut sink: Option<AnswerSink>,
    ) -> Result<RunOutput, RunError> {
        let toolbox = self.gather_tools(trace).await?;
        let tools = toolbox.model_tools();
        let tools = (!tools.is_empty()).then_some(tools.as_slice());
        let mut history: Vec<Turn> = self
            .system_prompt
            .iter()
            .cloned()
            .map(Turn::System)
            .collect();
        history.extend(conversation);
        let mut run = Progress::new(self.model.model());
        for _ in 0..self.max_steps {
            if let Some(sink) = sink.as_mut() {
                sink.step_boundary();
            }
            let reply = self
                .model
                .chat(&history, tools, &trace.child(), sink.as_mut())
                .await?;
            let answer = run.absorb(&reply);
            let calls = reply.turn.tool_calls.clone();
            history.push(Turn::Assistant(reply.turn));
            if calls.is_empty() {
                return Ok(run.finish(answer, false));
            }
            for call in &calls {
                let (invocation, turn) = self.invoke(&toolbox, call, trace).await?;
                run.tool_calls.push(invocation);
                history.push(Turn::Tool(turn));
            }
        }
        if let Some(sink) = sink.as_mut() {
            sink.step_boundary();
        }
        let reply = self
            .model
            .chat(&history, None, &trace.child(), sink.as_mut())
            .await?;
        let answer = run.absorb(&reply);
        let note = format!(
            "(Stopped after {} tool rounds: the step limit was reached, so this answer was given without more tools.)",
            self.max_steps
        );
        if let Some(sink) = sink.as_mut() {
            sink.send(format!("\n\n{note}")).await?;
        }
        let answer = if answer.is_empty() {
            note
        } else {
            format!("{answer}\n\n{note}")
        };
        Ok(run.finish(answer, true))
    }

    /// tools/list on every server, in order (as the article does, once per request).
    async fn gather_tools(&self, trace: &TraceContext) -> Result<Toolbox, UpstreamError> {
        let mut listings = Vec::with_capacity(self.servers.len());
        for server in &self.servers {
            let listing = server.list_tools(trace).await?;
            listings.push((server.name().await, listing.tools));
        }
        Ok(Toolbox::new(listings))
    }

    /// Runs one tool call, or explains to the model why it could not run.
    async fn invoke(
        &self,
        toolbox: &Toolbox,
        call: &ModelToolCall,
        trace: &TraceContext,
    ) -> Result<(ToolInvocation, ToolResultTurn), UpstreamError> {
        let mut invocation = ToolInvocation {
            server: None,
            name: call.name.clone(),
            arguments: call.arguments.to_value(),
            output: String::new(),
            is_error: true,
            duration_ms: 0,
        };
        let entry = toolbox.find(&call.name);
        let arguments = call.arguments.to_object();
        let output = match (entry, arguments) {
            (None, _) => format!(
                "Error: there is no tool named \"{}\". The tools you can call are: {}.",
                call.name,
                toolbox.names().join(", ")
            ),
            (Some(entry), Err(why)) => {
                invocation.server = Some(entry.server_name.clone());
                invocation.name = entry.tool.name.clone();
                format!(
                    "Error: {why}. Call {} again with a JSON object of arguments.",
                    call.name
                )
            }
            (Some(entry), Ok(arguments)) => {
                invocation.server = Some(entry.server_name.clone());
                invocation.name = entry.tool.name.clone();
                let started = Instant::now();
                let outcome = self.servers[entry.server]
                    .call_tool(&entry.tool.name, arguments, trace)
                    .await?;
                invocation.duration_ms =
                    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                match outcome {
                    Ok(result) => {
                        let text = result_text(&result);
                        if result.is_error || result.result_type == Some(ResultType::InputRequired)
                        {
                            format!("Error from tool {}: {text}", call.name)
                        } else {
                            invocation.is_error = false;
                            text
                        }
                    }
                    Err(error) => format!(
                        "Error: calling tool {} failed: {} (JSON-RPC error {})",
                        call.name, error.message, error.code
                    ),
                }
            }
        };
        invocation.output.clone_from(&output);
        let turn = ToolResultTurn {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: output,
        };
        Ok((invocation, turn))
    }
}

/// What a run has gathered so far.
struct Progress {
    model: String,
    steps: u32,
    thinking: Vec<String>,
    tool_calls: Vec<ToolInvocation>,
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl Progress {
    fn new(model: &str) -> Self {
        Self {
            model: model.to_string(),
            steps: 0,
            thinking: Vec::new(),
            tool_calls: Vec::new(),
            prompt_tokens: 0,
            completion_tokens: 0,
        }
    }

    /// Counts one model call; returns its answer with any `<think>` block split off.
    fn absorb(&mut self, reply: &ModelReply) -> String {
        self.steps += 1;
        self.model.clone_from(&reply.model);
        self.prompt_tokens += reply.prompt_tokens;
        self.completion_tokens += reply.completion_tokens;
        let (answer, inline_thinking) = split_thinking(&reply.turn.content);
        self.thinking.extend(reply.turn.thinking.clone());
        self.thinking.extend(inline_thinking);
        answer
    }

    fn finish(self, answer: String, step_limit_reached: bool) -> RunOutput {
        RunOutput {
            reply: AgentReply {
                reply: answer,
                thinking: (!self.thinking.is_empty()).then(|| self.thinking.join("\n\n")),
                tool_calls: self.tool_calls,
                steps: self.steps,
                model: self.model,
                step_limit_reached,
            },
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
        }
    }
}
