//! The notes-agent command line: its flags (clap) and how they, plus `$OLLAMA_HOST`,
//! `$OPENAI_BASE_URL` and `$OPENAI_API_KEY`, become an [`AgentConfig`].

use std::net::SocketAddr;
use std::time::Duration;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, ValueEnum};

use super::config::{self, AgentConfig, ConfigError, DEFAULT_MODEL, McpServerSpec, ModelApi};

#[derive(Parser)]
#[command(
    version,
    about = "The reference agent host: POST /agent {\"message\"} runs the tool loop"
)]
pub struct AgentArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1:8081", value_parser = tracer_serve::parse_listen)]
    pub listen: SocketAddr,
    /// The model server's API
    #[arg(long, value_enum, default_value_t = Api::Ollama)]
    pub model_api: Api,
    /// Model server base URL (wins over $OLLAMA_HOST; for openai it ends in /v1)
    #[arg(long, value_name = "URL")]
    pub model_url: Option<String>,
    /// Model name
    #[arg(long, default_value = DEFAULT_MODEL)]
    pub model: String,
    /// Stream from the model (Ollama NDJSON, OpenAI SSE) also for /agent
    #[arg(long)]
    pub stream: bool,
    /// MCP server over Streamable HTTP (repeatable; default http://127.0.0.1:8080/mcp)
    #[arg(long = "mcp", value_name = "URL")]
    pub mcp: Vec<String>,
    /// MCP server over stdio, spawned once and kept (repeatable), e.g. "notes-server --stdio"
    #[arg(long = "mcp-cmd", value_name = "CMD ARGS")]
    pub mcp_cmd: Vec<String>,
    /// Tool rounds before the model is asked for an answer without tools
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: u32,
    /// System prompt replacing the default strict one ("" sends none)
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// Seconds to wait for the model's next byte
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS")]
    pub model_timeout: f64,
    /// Seconds to wait for an MCP server's answer
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub mcp_timeout: f64,
    /// Ollama keep_alive sent with each chat ("" leaves it out)
    #[arg(long, default_value = "30m")]
    pub keep_alive: String,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Api {
    Ollama,
    Openai,
}

fn mcp_servers(args: &AgentArgs, matches: &ArgMatches) -> Result<Vec<McpServerSpec>, ConfigError> {
    // Keep the command-line order of --mcp and --mcp-cmd: it decides tool order and name suffixes.
    let mut specs: Vec<(usize, McpServerSpec)> = Vec::new();
    for (url, at) in args
        .mcp
        .iter()
        .zip(matches.indices_of("mcp").into_iter().flatten())
    {
        specs.push((at, McpServerSpec::Http { url: url.clone() }));
    }
    for (line, at) in args
        .mcp_cmd
        .iter()
        .zip(matches.indices_of("mcp_cmd").into_iter().flatten())
    {
        specs.push((at, McpServerSpec::stdio_from_command_line(line)?));
    }
    specs.sort_by_key(|(at, _)| *at);
    Ok(specs.into_iter().map(|(_, spec)| spec).collect())
}

impl AgentArgs {
    /// Parses the process's arguments (exits with usage on error, like clap does).
    pub fn parse_with_order() -> (Self, ArgMatches) {
        let matches = Self::command().get_matches();
        match Self::from_arg_matches(&matches) {
            Ok(args) => (args, matches),
            Err(error) => error.exit(),
        }
    }

    /// The configuration these flags and the given environment lookup describe.
    pub fn into_config(
        self,
        matches: &ArgMatches,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<AgentConfig, ArgsError> {
        let api = match self.model_api {
            Api::Ollama => ModelApi::Ollama,
            Api::Openai => ModelApi::OpenAi,
        };
        let url = config::model_base_url(
            api,
            self.model_url.as_deref(),
            env("OLLAMA_HOST").as_deref(),
            env("OPENAI_BASE_URL").as_deref(),
        );
        let mut config = AgentConfig::new(api, url);
        let servers = mcp_servers(&self, matches)?;
        if !servers.is_empty() {
            config.mcp_servers = servers;
        }
        config.model = self.model;
        config.stream = self.stream;
        config.api_key = env("OPENAI_API_KEY");
        config.keep_alive = Some(self.keep_alive).filter(|k| !k.is_empty());
        config.max_steps = self.max_steps;
        if let Some(system) = self.system {
            config.system_prompt = Some(system);
        }
        config.model_timeout = seconds("--model-timeout", self.model_timeout)?;
        config.mcp_timeout = seconds("--mcp-timeout", self.mcp_timeout)?;
        Ok(config)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0} must be a positive number of seconds")]
    Seconds(&'static str),
}

fn seconds(flag: &'static str, value: f64) -> Result<Duration, ArgsError> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or(ArgsError::Seconds(flag))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn config_of(args: &[&str], env: &[(&str, &str)]) -> Result<AgentConfig, ArgsError> {
        let matches = AgentArgs::command()
            .try_get_matches_from(std::iter::once("notes-agent").chain(args.iter().copied()))
            .unwrap();
        let parsed = AgentArgs::from_arg_matches(&matches).unwrap();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parsed.into_config(&matches, |name| {
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn cli_is_consistent() {
        AgentArgs::command().debug_assert();
    }

    #[test]
    fn defaults_are_the_articles() {
        let config = config_of(&[], &[]).unwrap();
        assert_eq!(config.chat_url(), "http://127.0.0.1:11434/api/chat");
        assert_eq!(config.model, "qwen2.5:7b");
        assert_eq!(
            config.mcp_servers,
            [McpServerSpec::Http {
                url: config::DEFAULT_MCP_URL.into()
            }]
        );
        assert_eq!(
            (
                config.max_steps,
                config.model_timeout.as_secs(),
                config.mcp_timeout.as_secs()
            ),
            (5, 300, 30)
        );
        let from_env = config_of(&[], &[("OLLAMA_HOST", "0.0.0.0:9999")]).unwrap();
        assert_eq!(from_env.chat_url(), "http://0.0.0.0:9999/api/chat");
    }

    #[test]
    fn mcp_servers_keep_their_command_line_order() {
        let config = config_of(
            &[
                "--mcp-cmd",
                "notes-server --stdio",
                "--mcp",
                "http://127.0.0.1:1/mcp",
                "--model-api",
                "openai",
                "--model-url",
                "http://127.0.0.1:8000/v1",
                "--system",
                "",
            ],
            &[("OPENAI_API_KEY", "sk-test"), ("OLLAMA_HOST", "ignored:1")],
        )
        .unwrap();
        assert_eq!(
            config.mcp_servers[0].address(),
            "stdio: notes-server --stdio"
        );
        assert_eq!(config.mcp_servers[1].address(), "http://127.0.0.1:1/mcp");
        assert_eq!(
            config.chat_url(),
            "http://127.0.0.1:8000/v1/chat/completions"
        );
        assert_eq!(config.api_key.as_deref(), Some("sk-test"));
        assert_eq!(config.system_prompt.as_deref(), Some(""));
        assert!(config_of(&["--mcp-timeout", "0"], &[]).is_err());
    }
}
