//! The `tracer` command line: clap types for every subcommand, and dispatch to each command.

mod args;
mod ca_cmd;
mod completions_cmd;
mod correlate_cmd;
mod cost_text;
mod demo_cmd;
mod diff_cmd;
pub mod error_line;
mod eval_cmd;
mod events_cmd;
pub mod export_cmd;
mod fork_cmd;
mod fork_host;
mod import;
mod import_claude;
mod keep_while_recording;
mod ls;
mod ls_sessions;
mod mcp_cmd;
pub mod otlp_args;
mod proxy_cmd;
mod replay_cmd;
mod rerun_cmd;
mod run_cmd;
mod run_fork;
mod run_report;
mod search_cmd;
pub mod serve_replay_cmd;
mod show;
mod show_agent;
mod show_changes;
mod show_stderr;
mod stdout_text;
mod tables;
mod telemetry_beside;
mod tui_cmd;
mod ui_beside;
mod ui_cmd;
mod up_cmd;
mod wrap_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use args::*;

/// A wire inspector for AI agents: record, group and explain what crosses the wire between an
/// agent, its model and its MCP servers.
#[derive(Debug, Parser)]
#[command(
    name = "tracer",
    version,
    propagate_version = true,
    after_help = "Start with `tracer run -- claude` (or codex, gemini, opencode), or `tracer demo`: \
                  \"Add buy milk to my notes\" from Abiral Khanal's article \"How MCP and tool \
                  calling really work: I built an AI agent from scratch in Java and traced every \
                  step\" (DEV Community, 2026), end to end with no agent and no model."
)]
pub struct Cli {
    /// The tracer database [default: tracer.db; `tracer demo`: one in its --dir]
    #[arg(long, global = true, env = "TRACER_DB")]
    pub db: Option<PathBuf>,

    /// More logging on stderr (-v info, -vv debug, -vvv trace); RUST_LOG wins when set
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// A price table in LiteLLM's JSON format that extends or overrides the one built in
    /// (list prices per token; costs are estimates at list prices)
    #[arg(long, global = true, env = "TRACER_PRICES", value_name = "FILE")]
    pub prices: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run Abiral Khanal's buy-milk article end to end on this machine and print its numbered trace
    ///
    /// The article: "How MCP and tool calling really work: I built an AI agent from scratch in
    /// Java and traced every step", Abiral Khanal, DEV Community, 31 October 2026 (its code:
    /// https://github.com/abir4l/mcp_server and https://github.com/abir4l/local_agent).
    /// Starts notes-server, notes-agent and the proxy on free ports, sends "Add buy milk to my
    /// notes", and leaves the database for `tui`, `replay` and `export`. Uses a live Ollama at
    /// $OLLAMA_HOST when it has the model, else the recorded buy-milk model built into tracer.
    Demo(DemoArgs),
    /// Run the recording proxy in front of model, MCP and agent servers
    Proxy(ProxyArgs),
    /// Run a program (an agent) with tracer in the middle: its HTTP(S), and its stdio MCP servers
    ///
    /// Starts the forward proxy on a free loopback port, runs COMMAND with the proxy and trust
    /// variables of every common runtime set (tracer's CA made on first use), and, for the
    /// agents tracer knows (claude, codex, gemini, opencode, qwen), starts each stdio MCP server
    /// of theirs through `tracer wrap` for this run only (the user's files are never changed).
    /// The command keeps the terminal; tracer exits with its exit code (128+N after signal N).
    Run(run_cmd::RunArgs),
    /// Print the path of tracer's CA certificate, creating the CA on first use
    ///
    /// The forward proxy (`tracer proxy --forward`) answers HTTPS with certificates this CA signs;
    /// clients must trust it to be read. `--env` prints shell lines that point the usual trust
    /// variables at a bundle of the system's roots plus this CA: `eval "$(tracer ca --env)"`.
    Ca(CaArgs),
    /// List traces, newest first (--hops: the raw hops)
    Ls(LsArgs),
    /// Run the topology of Abiral Khanal's buy-milk article with tracer in the middle
    ///
    /// notes-agent (the article's host), notes-server (its MCP server) and the proxy.
    /// The proxy takes the ports a reader talks to (8081 agent, 8080 MCP) and forwards to
    /// notes-agent and notes-server on internal ports; the model route listens on 11435 and
    /// forwards to Ollama on 11434. Ctrl-C stops everything.
    Up(UpArgs),
    /// Show one trace: its numbered messages, each explained
    Show(ShowArgs),
    /// Find the traces whose titles or messages hold a text (bodies decoded)
    ///
    /// Lists each matching trace, newest first, with the numbers of its messages that hold the
    /// text (as `tracer show` numbers them) and an excerpt of each. Any case; JSON escapes are
    /// read as what they spell; gzip, deflate, br and zstd bodies are decoded; a streamed answer
    /// is read as the text its events spell together.
    Search(SearchArgs),
    /// Read a JSON hop log (from `tracer show ID --json`) into the database
    Import(ImportArgs),
    /// List the agents' own telemetry events by session: where each was placed, or unplaced
    ///
    /// Coding agents export what the wire cannot see (permission decisions, the commands the
    /// host runs itself, hooks, retries, their own cost) over OpenTelemetry; `tracer run` turns
    /// it on and `--otlp-listen` receives it (docs/agent-telemetry.md).
    Events(events_cmd::EventsArgs),
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
    /// Serve the live web UI over the database: sessions, traces, each message explained, diff
    Ui(ui_cmd::UiArgs),
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
    ///
    /// A re-run of the agent request runs the agent's tools again, for real: what they change (a
    /// notes file, a ticket) changes again; it says so on stderr. --step sends only the model
    /// request and runs no tool.
    Rerun(rerun_cmd::RerunArgs),
    /// Run a trace again from a message on: before N answered from the recording, N edited, live after
    ///
    /// Messages before N (model calls and MCP calls alike) are answered from the recording, so
    /// nothing before N reaches a model or acts on the world again; at N the edits are made
    /// (--set, --body, --edit, --model, --tool-description, --result/--error, --upstream) and
    /// from N on everything goes live. A request before N that matches no recording ends the
    /// replay there, and says why. The fork is a trace of its own, linked to the original, and
    /// the diff of the two is printed.
    Fork(fork_cmd::ForkArgs),
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

/// The database when neither `--db` nor `TRACER_DB` names one.
pub const DEFAULT_DB: &str = "tracer.db";

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let db = cli.db.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DB));
    if let Some(path) = &cli.prices {
        cost_text::install_prices(path)?;
    }
    match cli.command {
        Command::Demo(args) => demo_cmd::run(cli.db, args).await,
        Command::Proxy(args) => proxy_cmd::run(&db, args).await,
        Command::Ca(args) => ca_cmd::run(args),
        Command::Run(args) => run_cmd::run(&db, args).await,
        Command::Ls(args) => ls::run(&db, args).await,
        Command::Up(args) => up_cmd::run(&db, args).await,
        Command::Show(args) => show::run(&db, args).await,
        Command::Search(args) => search_cmd::run(&db, args).await,
        Command::Import(args) => import::run(&db, args).await,
        Command::Events(args) => events_cmd::run(&db, args).await,
        Command::Correlate(args) => correlate_cmd::run(&db, args).await,
        Command::Wrap(args) => wrap_cmd::run(db, args).await,
        Command::Export(args) => export_cmd::run(&db, args).await,
        Command::ServeReplay(args) => serve_replay_cmd::run(args).await,
        Command::Tui(args) => tui_cmd::run(&db, args).await,
        Command::Ui(args) => ui_cmd::run(&db, args).await,
        Command::Replay(args) => replay_cmd::run(&db, args).await,
        Command::Diff(args) => diff_cmd::run(&db, args).await,
        Command::Rerun(args) => rerun_cmd::run(&db, args).await,
        Command::Fork(args) => fork_cmd::run(&db, args).await,
        Command::Eval(args) => eval_cmd::run(&db, args).await,
        Command::Completions(args) => completions_cmd::run(args),
        Command::Mcp(args) => mcp_cmd::run(&db, args).await,
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
