//! The `tracer` command line: clap types for every subcommand, and dispatch to each command.

mod ca_cmd;
mod completions_cmd;
mod correlate_cmd;
mod demo_cmd;
mod diff_cmd;
mod eval_cmd;
pub mod export_cmd;
mod import;
mod ls;
mod mcp_cmd;
pub mod otlp_args;
mod proxy_cmd;
mod replay_cmd;
mod rerun_cmd;
pub mod serve_replay_cmd;
mod show;
mod stdout_text;
mod tui_cmd;
mod up_cmd;
mod wrap_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::proxy::Route;

/// A wire inspector for AI agents: record, group and explain what crosses the wire between an
/// agent, its model and its MCP servers.
#[derive(Debug, Parser)]
#[command(name = "tracer", version, propagate_version = true)]
pub struct Cli {
    /// The tracer database
    #[arg(long, global = true, env = "TRACER_DB", default_value = "tracer.db")]
    pub db: PathBuf,

    /// More logging on stderr (-v info, -vv debug, -vvv trace); RUST_LOG wins when set
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the article end to end on this machine and print its numbered trace
    ///
    /// Starts notes-server, notes-agent and the proxy on free ports, sends "Add buy milk to my
    /// notes", and leaves the database for `tui`, `replay` and `export`. Uses a live Ollama at
    /// $OLLAMA_HOST when it has the model, else the recorded buy-milk model built into tracer.
    Demo(DemoArgs),
    /// Run the recording proxy in front of model, MCP and agent servers
    Proxy(ProxyArgs),
    /// Print the path of tracer's CA certificate, creating the CA on first use
    ///
    /// The forward proxy (`tracer proxy --forward`) answers HTTPS with certificates this CA signs;
    /// clients must trust it to be read. `--env` prints shell lines that point the usual trust
    /// variables at a bundle of the system's roots plus this CA: `eval "$(tracer ca --env)"`.
    Ca(CaArgs),
    /// List traces, newest first (--hops: the raw hops)
    Ls(LsArgs),
    /// Run the article's topology with tracer in the middle: notes-agent, notes-server, the proxy
    ///
    /// The proxy takes the ports a reader talks to (8081 agent, 8080 MCP) and forwards to
    /// notes-agent and notes-server on internal ports; the model route listens on 11435 and
    /// forwards to Ollama on 11434. Ctrl-C stops everything.
    Up(UpArgs),
    /// Show one trace: its numbered messages, each explained
    Show(ShowArgs),
    /// Read a JSON hop log (from `tracer show ID --json`) into the database
    Import(ImportArgs),
    /// Group recorded hops into traces (the proxy does this as it runs)
    Correlate(CorrelateArgs),
    /// Run a stdio MCP server and record the JSON-RPC on its stdin and stdout
    ///
    /// In a host's config, replace the server command with `tracer wrap -- <command>`. Hosts often
    /// start servers with a stripped environment and an unknown working directory: give the
    /// database as an absolute path (--db or TRACER_DB).
    Wrap(WrapArgs),
    /// Browse traces live in the terminal: the list, each trace's sequence diagram and messages
    Tui(TuiArgs),
    /// Step through one trace's messages in the order they happened
    Replay(ReplayArgs),
    /// Write a trace as a hop log (json), HAR, OpenTelemetry (otlp), Mermaid, a Markdown or HTML handout
    Export(ExportArgs),
    /// Answer model (or MCP) requests from a recorded hop log, standing in for a server
    ///
    /// A request is matched to a recorded one by method, path and the conversation it carries
    /// (roles, contents, tool calls and results; not ids, timestamps, options or the system
    /// prompt's wording). An unmatched request gets a JSON error naming the closest recording.
    ServeReplay(ServeReplayArgs),
    /// Compare two traces step by step: tools, arguments, results, reply, messages, time, tokens
    ///
    /// A and B are trace ids (or prefixes) or hop-log files. A step is one model call and the tool
    /// calls it asked for. The first line says in one sentence what changed.
    Diff(diff_cmd::DiffArgs),
    /// Send a trace's first request to the agent again (recorded as a new trace) and diff it
    ///
    /// With --times N, tally the tool calls across runs. With --step K --model-url URL, re-send
    /// the recorded model request of step K instead (optionally with another --model, or the
    /// tool list fetched fresh --tools-from an MCP server) and tally which tools the model asks for.
    Rerun(rerun_cmd::RerunArgs),
    /// Ask an agent a TOML question set and judge each answer from its recorded trace
    ///
    /// Questions go through a tracer proxy's agent route (--agent); what counts is the tool calls
    /// on the wire. Runs are stored: --list shows them, --compare RUN_A RUN_B compares two.
    Eval(eval_cmd::EvalArgs),
    /// Serve the trace database read-only to MCP clients (agents reading their own traces)
    ///
    /// Tools: list_traces, get_trace, get_message, search, tool_stats, diff_traces. Streamable
    /// HTTP on 127.0.0.1 (`POST /mcp`) by default, or --stdio for a host's config. Never writes.
    Mcp(mcp_cmd::McpArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell) on stdout
    ///
    /// bash: `tracer completions bash > ~/.local/share/bash-completion/completions/tracer`;
    /// zsh: into a folder on $fpath as `_tracer`; fish: `~/.config/fish/completions/tracer.fish`.
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The trace id, or an unambiguous prefix of it
    #[arg(value_name = "ID", required_unless_present = "all")]
    pub id: Option<String>,

    /// The format to write
    #[arg(long, short = 'f', value_enum, default_value = "json")]
    pub format: export_cmd::ExportFormat,

    /// Write to this file (with --all and a one-trace-per-file format: this directory)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Export every trace: one document for har and otlp, one file per trace otherwise (html adds an index.html)
    #[arg(long)]
    pub all: bool,

    /// With --format otlp: write the binary protobuf ExportTraceServiceRequest, not OTLP/JSON
    #[arg(long)]
    pub protobuf: bool,

    /// With --format otlp: send the spans to an OpenTelemetry receiver instead of writing them
    /// (a base URL; /v1/traces is appended). Spans it already has are skipped
    #[arg(long, value_name = "URL", conflicts_with_all = ["output", "protobuf"])]
    pub push: Option<String>,

    /// A header on every --push request, e.g. "Authorization=Basic ..." (repeatable)
    #[arg(long = "otlp-header", value_name = "K=V", requires = "push")]
    pub otlp_headers: Vec<String>,

    /// With --format otlp: include message contents (prompts, answers, tool arguments, results)
    #[arg(long)]
    pub otlp_content: bool,
}

#[derive(Debug, Args)]
pub struct ServeReplayArgs {
    /// A hop log (`tracer export --format json`, or a file of sample-traces/)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Where to listen (the default is Ollama's address, to stand in for it)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:11434")]
    pub listen: String,

    /// Which recorded server to stand in for
    #[arg(long, value_enum, default_value = "model")]
    pub role: serve_replay_cmd::ReplayRoleArg,

    /// `recorded` re-emits streamed answers with their recorded chunk timing; `fast` sends at once
    #[arg(long, value_enum, default_value = "fast")]
    pub pace: serve_replay_cmd::PaceArg,
}

impl Command {
    /// Where logs go instead of stderr while a full-screen UI owns the terminal.
    pub fn log_file(&self) -> Option<PathBuf> {
        let chosen = |path: &Option<PathBuf>| {
            Some(path.clone().unwrap_or_else(crate::tui::default_log_file))
        };
        match self {
            Command::Tui(args) => chosen(&args.log_file),
            Command::Replay(args) if !args.plain => chosen(&args.log_file),
            _ => None,
        }
    }
}

#[derive(Debug, Args)]
pub struct TuiArgs {
    /// Write logs here while the TUI runs (default: tracer-tui.log in the temp folder)
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,

    /// Where `e` writes exported traces
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub export_dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A trace id (or an unambiguous prefix) in the database, or an exported JSON hop log
    #[arg(value_name = "ID|FILE.json")]
    pub trace: String,

    /// Playing speed: 1 is the recorded pace, 2 twice as fast
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,

    /// Print the steps to stdout instead of opening the TUI
    #[arg(long)]
    pub plain: bool,

    /// Write logs here while the TUI runs (default: tracer-tui.log in the temp folder)
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
}

fn parse_speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(speed) if speed.is_finite() && speed > 0.0 => Ok(speed),
        _ => Err(format!(
            "`{text}` is not a speed (a number above 0, e.g. 0.5 or 4)"
        )),
    }
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to keep the notes file and the database (default: a new folder in the temp dir)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The model to ask a live Ollama for
    #[arg(long, default_value = crate::reference::agent::config::DEFAULT_MODEL)]
    pub model: String,
    /// Use the recorded model even when a live Ollama answers
    #[arg(long)]
    pub recorded: bool,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    /// Address the proxy's routes listen on
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// The agent route (what you call)
    #[arg(long, default_value_t = 8081)]
    pub agent_port: u16,
    /// The MCP route, in front of notes-server
    #[arg(long, default_value_t = 8080)]
    pub mcp_port: u16,
    /// The model route, in front of Ollama
    #[arg(long, default_value_t = 11435)]
    pub model_port: u16,
    /// Where notes-agent really listens (127.0.0.1)
    #[arg(long, default_value_t = 18081)]
    pub agent_internal_port: u16,
    /// Where notes-server really listens (127.0.0.1)
    #[arg(long, default_value_t = 18080)]
    pub mcp_internal_port: u16,
    /// The Ollama server (default: $OLLAMA_HOST, else http://127.0.0.1:11434)
    #[arg(long, value_name = "URL", conflicts_with = "recorded")]
    pub ollama: Option<String>,
    /// Stand the built-in recorded buy-milk model in for Ollama (no model server needed; it
    /// answers the article's request, "Add buy milk to my notes")
    #[arg(long)]
    pub recorded: bool,
    /// The model notes-agent asks for
    #[arg(long, default_value = crate::reference::agent::config::DEFAULT_MODEL)]
    pub model: String,
    /// The notes file notes-server owns
    #[arg(long, default_value = "data/db")]
    pub notes: PathBuf,

    #[command(flatten)]
    pub otlp: otlp_args::OtlpArgs,
}

#[derive(Debug, Args)]
pub struct WrapArgs {
    /// The server's name in traces (default: the command's file name)
    #[arg(long)]
    pub name: Option<String>,

    /// Bytes of each message kept in the record
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_body: usize,

    #[command(flatten)]
    pub otlp: otlp_args::OtlpArgs,

    /// The server command and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// A route: ROLE[:NAME]=LISTEN=UPSTREAM, e.g. model=127.0.0.1:11435=http://127.0.0.1:11434
    /// (ROLE is agent, model, mcp or other; repeatable)
    #[arg(long = "route", value_name = "ROLE[:NAME]=LISTEN=UPSTREAM", value_parser = parse_route)]
    pub routes: Vec<Route>,

    /// Read routes from a TOML file of [[route]] tables (role, name, listen, upstream)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Bytes of each body kept in the record (the rest is forwarded and counted)
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_body: usize,

    /// Seconds to wait for an upstream's response head before answering 504
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    pub upstream_timeout: f64,

    /// Keep secrets in the record: headers whose name contains key, token, secret, auth, cookie
    /// or session, and the query parameters key, api_key, apikey, token, access_token, sig
    #[arg(long)]
    pub no_redact: bool,

    #[command(flatten)]
    pub otlp: otlp_args::OtlpArgs,
    /// A PEM file of CA certificates to trust for https:// upstreams, beside the system's roots
    /// (repeatable)
    #[arg(long = "upstream-ca", value_name = "FILE")]
    pub upstream_cas: Vec<PathBuf>,

    /// Connect to ADDR:PORT when an upstream URL says HOST:PORT; TLS and Host still say HOST
    /// (repeatable, like curl's --resolve)
    #[arg(long, value_name = "HOST:PORT=ADDR:PORT")]
    pub resolve: Vec<crate::proxy::tls::HostPin>,

    /// Also run a forward proxy here (give clients HTTPS_PROXY/HTTP_PROXY=http://ADDR): HTTPS is
    /// decrypted with certificates from tracer's CA (`tracer ca`)
    #[arg(long, value_name = "ADDR")]
    pub forward: Option<std::net::SocketAddr>,

    /// Forward mode: decrypt only these hosts (`api.openai.com`, `*.example.com`); others are
    /// tunnelled untouched and recorded as one tunnel hop (default: every host)
    #[arg(
        long,
        value_name = "PATTERN,...",
        value_delimiter = ',',
        requires = "forward"
    )]
    pub intercept: Vec<crate::proxy::forward_roles::HostPattern>,

    /// Forward mode: the role (and route name) of a host's hops, instead of telling by the
    /// request (repeatable; HOST may be `*.domain`)
    #[arg(long, value_name = "HOST=ROLE[:NAME]", requires = "forward")]
    pub host_role: Vec<crate::proxy::forward_roles::HostRole>,

    /// Forward mode: the CA's directory (as for `tracer ca`)
    #[arg(long, value_name = "DIR", requires = "forward")]
    pub ca_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CaArgs {
    /// The CA's directory (default: $TRACER_CA_DIR, else $XDG_DATA_HOME/tracer, else
    /// ~/.local/share/tracer)
    #[arg(long, value_name = "DIR")]
    pub ca_dir: Option<PathBuf>,

    /// Print `export` lines for SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS and
    /// CURL_CA_BUNDLE, pointing at the system's roots plus tracer's CA
    #[arg(long)]
    pub env: bool,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    /// Print one JSON document (an array) instead of a table
    #[arg(long)]
    pub json: bool,

    /// List the raw hops instead of traces
    #[arg(long)]
    pub hops: bool,

    /// How many to list
    #[arg(long, short = 'n', default_value_t = 50)]
    pub limit: i64,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The trace's id, or an unambiguous prefix of it (as `tracer ls` shows)
    pub id: String,

    /// Print the JSON hop log (docs/hop-log.md) instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A JSON hop log, as `tracer show ID --json` prints it
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct CorrelateArgs {
    /// Forget the grouping done so far and group every hop again (imported traces are kept)
    #[arg(long)]
    pub rebuild: bool,
}

fn parse_route(spec: &str) -> Result<Route, String> {
    Route::parse(spec).map_err(|e| e.to_string())
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Demo(args) => demo_cmd::run(args).await,
        Command::Proxy(args) => proxy_cmd::run(&cli.db, args).await,
        Command::Ca(args) => ca_cmd::run(args),
        Command::Ls(args) => ls::run(&cli.db, args).await,
        Command::Up(args) => up_cmd::run(&cli.db, args).await,
        Command::Show(args) => show::run(&cli.db, args).await,
        Command::Import(args) => import::run(&cli.db, args).await,
        Command::Correlate(args) => correlate_cmd::run(&cli.db, args).await,
        Command::Wrap(args) => wrap_cmd::run(cli.db, args).await,
        Command::Export(args) => export_cmd::run(&cli.db, args).await,
        Command::ServeReplay(args) => serve_replay_cmd::run(args).await,
        Command::Tui(args) => tui_cmd::run(&cli.db, args).await,
        Command::Replay(args) => replay_cmd::run(&cli.db, args).await,
        Command::Diff(args) => diff_cmd::run(&cli.db, args).await,
        Command::Rerun(args) => rerun_cmd::run(&cli.db, args).await,
        Command::Eval(args) => eval_cmd::run(&cli.db, args).await,
        Command::Completions(args) => completions_cmd::run(args),
        Command::Mcp(args) => mcp_cmd::run(&cli.db, args).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
