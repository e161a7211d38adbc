//! The arguments of each `tracer` subcommand (clap types); `cli.rs` holds the command list and
//! the dispatch.

use std::path::PathBuf;

use clap::Args;

use super::{export_cmd, otlp_args, serve_replay_cmd};
use tracer_record::proxy::Route;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The trace id, or an unambiguous prefix of it, or a JSON hop-log file (read without a
    /// database)
    #[arg(value_name = "ID|FILE", required_unless_present = "all")]
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
    /// (a base URL; /v1/traces is appended, as for --otlp). Spans it already has are skipped
    #[arg(long, value_name = "URL", group = "push_to", conflicts_with_all = ["output", "protobuf"])]
    pub push: Option<String>,

    /// As --push, to this traces URL used as given (as --otlp-traces-url and
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT are)
    #[arg(long, value_name = "URL", group = "push_to", conflicts_with_all = ["output", "protobuf"])]
    pub push_traces_url: Option<String>,

    /// A header on every --push request, e.g. "Authorization=Basic ..." (repeatable)
    #[arg(long = "otlp-header", value_name = "K=V", requires = "push_to")]
    pub otlp_headers: Vec<String>,

    /// With --format otlp: include message contents (prompts, answers, tool arguments, results)
    #[arg(long)]
    pub otlp_content: bool,
}

impl ExportArgs {
    /// Whether the spans go to a receiver (`--push` or `--push-traces-url`).
    pub fn pushes(&self) -> bool {
        self.push.is_some() || self.push_traces_url.is_some()
    }
}

#[derive(Debug, Args)]
pub struct ServeReplayArgs {
    /// A hop log (`tracer export --format json`, or a file of sample-traces/)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Where to listen (the default is Ollama's address, to stand in for it)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:11434",
          value_parser = tracer_serve::parse_listen)]
    pub listen: std::net::SocketAddr,

    /// Which recorded server to stand in for
    #[arg(long, value_enum, default_value = "model")]
    pub role: serve_replay_cmd::ReplayRoleArg,

    /// `recorded` re-emits streamed answers with their recorded chunk timing; `fast` sends at once
    #[arg(long, value_enum, default_value = "fast")]
    pub pace: serve_replay_cmd::PaceArg,
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

/// The one switch of redaction, on every command that records.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct Redaction {
    /// Keep secrets in the record, byte-exact: secret headers, query and form parameters, JSON
    /// fields and URL credentials (the list: docs/security.md)
    #[arg(long)]
    pub no_redact: bool,
}

impl Redaction {
    /// Whether the record is redacted.
    pub fn redact(self) -> bool {
        !self.no_redact
    }
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to keep the notes file and the database (default: a new folder in the temp dir)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The model to ask a live Ollama for
    #[arg(long, default_value = tracer_reference::agent::config::DEFAULT_MODEL)]
    pub model: String,
    /// Use the recorded model even when a live Ollama answers
    #[arg(long)]
    pub recorded: bool,
    #[command(flatten)]
    pub redaction: Redaction,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    /// Address the proxy's routes listen on
    #[arg(long, default_value = "127.0.0.1", value_parser = parse_listen_host)]
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
    #[arg(long, default_value = tracer_reference::agent::config::DEFAULT_MODEL)]
    pub model: String,
    /// The notes file notes-server owns
    #[arg(long, default_value = "data/db")]
    pub notes: PathBuf,

    #[command(flatten)]
    pub redaction: Redaction,
    #[command(flatten)]
    pub otlp: otlp_args::OtlpArgs,
    #[command(flatten)]
    pub ui: super::ui_beside::UiFlag,
    #[command(flatten)]
    pub otlp_listen: super::telemetry_beside::OtlpListenFlag,
}

#[derive(Debug, Args)]
pub struct WrapArgs {
    /// The server's name in traces (default: the command's file name)
    #[arg(long)]
    pub name: Option<String>,

    /// Bytes of each message kept in the record
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_body: usize,

    /// The `tracer run` the server's hops belong to (set by `tracer run` when it wraps an
    /// agent's stdio servers)
    #[arg(long, value_name = "ID", hide = true)]
    pub run_id: Option<String>,

    #[command(flatten)]
    pub redaction: Redaction,

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

    #[command(flatten)]
    pub redaction: Redaction,

    #[command(flatten)]
    pub otlp: otlp_args::OtlpArgs,
    #[command(flatten)]
    pub ui: super::ui_beside::UiFlag,
    #[command(flatten)]
    pub otlp_listen: super::telemetry_beside::OtlpListenFlag,
    /// A PEM file of CA certificates to trust for https:// upstreams, beside the system's roots
    /// (repeatable)
    #[arg(long = "upstream-ca", value_name = "FILE")]
    pub upstream_cas: Vec<PathBuf>,

    /// Connect to ADDR:PORT when an upstream URL says HOST:PORT; TLS and Host still say HOST
    /// (repeatable, like curl's --resolve)
    #[arg(long, value_name = "HOST:PORT=ADDR:PORT")]
    pub resolve: Vec<tracer_record::proxy::tls::HostPin>,

    /// Also run a forward proxy here (give clients HTTPS_PROXY/HTTP_PROXY=http://ADDR): HTTPS is
    /// decrypted with certificates from tracer's CA (`tracer ca`)
    #[arg(long, value_name = "ADDR", value_parser = tracer_serve::parse_listen)]
    pub forward: Option<std::net::SocketAddr>,

    /// Forward mode: decrypt only these hosts (`api.openai.com`, `*.example.com`); others are
    /// tunnelled untouched and recorded as one tunnel hop (default: every host)
    #[arg(
        long,
        value_name = "PATTERN,...",
        value_delimiter = ',',
        requires = "forward"
    )]
    pub intercept: Vec<tracer_record::proxy::forward_roles::HostPattern>,

    /// Forward mode: the role (and route name) of a host's hops, instead of telling by the
    /// request (repeatable; HOST may be `*.domain`)
    #[arg(long, value_name = "HOST=ROLE[:NAME]", requires = "forward")]
    pub host_role: Vec<tracer_record::proxy::forward_roles::HostRole>,

    /// Forward mode: the CA's directory (as for `tracer ca`)
    #[arg(long, value_name = "DIR", requires = "forward")]
    pub ca_dir: Option<PathBuf>,

    /// Forward mode: seconds a client has after its CONNECT to an intercepted host to complete
    /// its TLS handshake; then the connection is closed (and recorded as failed)
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = tracer_record::proxy::DEFAULT_HANDSHAKE_TIMEOUT.as_secs_f64(),
        requires = "forward"
    )]
    pub handshake_timeout: f64,

    /// Forward mode: connections open at once (with their tunnels); beyond it a new one is
    /// answered 503 and closed (default: a quarter of the open-file limit, 16 to 1024)
    #[arg(long, value_name = "N", requires = "forward", value_parser = clap::value_parser!(u32).range(1..))]
    pub forward_max_connections: Option<u32>,
}

#[derive(Debug, Args)]
pub struct CaArgs {
    /// The CA's directory (default: $TRACER_CA_DIR, else $XDG_DATA_HOME/tracer, else
    /// ~/.local/share/tracer)
    #[arg(long, value_name = "DIR")]
    pub ca_dir: Option<PathBuf>,

    /// Print `export` lines for the trust variables of every common runtime (SSL_CERT_FILE,
    /// REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, CODEX_CA_CERTIFICATE, GIT_SSL_CAINFO,
    /// CARGO_HTTP_CAINFO, AWS_CA_BUNDLE, DENO_CERT, NODE_EXTRA_CA_CERTS, …: the system's roots
    /// plus tracer's CA; NODE_USE_ENV_PROXY=1), the set `tracer run` sets
    #[arg(long)]
    pub env: bool,

    /// With --env: also HTTPS_PROXY, HTTP_PROXY and ALL_PROXY (both cases) at this forward proxy
    #[arg(long, value_name = "ADDR", requires = "env", value_parser = tracer_serve::parse_listen)]
    pub proxy: Option<std::net::SocketAddr>,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    /// Print one JSON document (an array) instead of a table
    #[arg(long)]
    pub json: bool,

    /// List the raw hops instead of traces
    #[arg(long, conflicts_with = "sessions")]
    pub hops: bool,

    /// List sessions (one run of a host each) with their traces, instead of traces alone
    #[arg(long)]
    pub sessions: bool,

    /// How many to list
    #[arg(long, short = 'n', default_value_t = 50)]
    pub limit: i64,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The trace's id, or an unambiguous prefix of it (as `tracer ls` shows), or a JSON hop-log
    /// file (read without a database)
    #[arg(value_name = "ID|FILE")]
    pub id: String,

    /// Print the JSON hop log (docs/hop-log.md) instead of text
    #[arg(long)]
    pub json: bool,

    /// Print what changed from each model request to the next of its conversation: parameters,
    /// tools, system blocks, messages added, removed or edited
    #[arg(long, conflicts_with = "json")]
    pub changes: bool,

    /// Say, beside each of the agent's own telemetry events, which id or rule placed it
    #[arg(long, conflicts_with = "json")]
    pub joins: bool,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The text to find (any case): in titles, the user's words, model text, tool calls and
    /// results, and every body (decoded; a stream's events read together)
    pub text: String,

    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,

    /// How many traces to list (the newest first; the rest are counted)
    #[arg(long, short = 'n', default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub limit: u64,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// JSON hop logs, as `tracer show ID --json` prints them (e.g. `sample-traces/agents/*.json`)
    #[arg(value_name = "FILE", required_unless_present_any = ["claude_transcript", "claude_bodies"])]
    pub files: Vec<PathBuf>,
    /// A Claude Code session transcript (`~/.claude/projects/…/SESSION.jsonl`): its model calls
    /// as hops, the tools it ran itself as events; calls the wire already holds are joined, not
    /// added (repeatable)
    #[arg(long, value_name = "FILE.jsonl")]
    pub claude_transcript: Vec<PathBuf>,
    /// A folder of Claude Code's raw API bodies (`OTEL_LOG_RAW_API_BODIES=file:DIR`): each
    /// request and answer as a hop (repeatable)
    #[arg(long, value_name = "DIR")]
    pub claude_bodies: Vec<PathBuf>,
    /// Keep secrets in what is read from the Claude Code sources (redacted by default)
    #[arg(long)]
    pub no_redact: bool,
}

#[derive(Debug, Args)]
pub struct CorrelateArgs {
    /// Forget the grouping done so far and group every hop again (imported traces are kept)
    #[arg(long)]
    pub rebuild: bool,
}

pub(super) fn parse_route(spec: &str) -> Result<Route, String> {
    Route::parse(spec).map_err(|e| e.to_string())
}

/// `tracer up --host`: an IP address, or `localhost` (127.0.0.1).
fn parse_listen_host(text: &str) -> Result<std::net::IpAddr, String> {
    tracer_serve::parse_listen(&format!("{text}:0"))
        .or_else(|_| tracer_serve::parse_listen(&format!("[{text}]:0")))
        .map(|addr| addr.ip())
        .map_err(|_| format!("`{text}` is not an IP address or localhost"))
}
