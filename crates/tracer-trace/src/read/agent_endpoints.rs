//! The coding agents' own endpoints beside the model, each named with its purpose: Claude Code's
//! account, settings, feature flags and event log (`/api/claude_cli/bootstrap`,
//! `/api/claude_code_penguin_mode`, `/api/eval/sdk-…`, `/api/event_logging/v2/batch`), Gemini
//! CLI's Code Assist account calls and usage statistics, Codex's metrics, opencode's model
//! catalog. Each is a side call: the user's request does not wait on it.

use tracer_wire::hop::{HopStart, header_text};

/// A call the host makes beside the user's conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SideCall {
    /// The host asks a model for a title of the conversation (Claude Code's Haiku call,
    /// opencode's title generator).
    Title,
    /// The host asks for a summary (of the conversation, of a result).
    Summary,
    /// The host asks a model to route or classify the request (Gemini CLI's router).
    Routing,
    /// A token count (`count_tokens`, `:countTokens`).
    CountTokens,
    /// A usage or quota probe (Code Assist's `retrieveUserQuota`).
    Quota,
    /// The agent's own telemetry (OTLP metrics, analytics events).
    Telemetry,
    /// The agent's account and the settings it fetches for it (Claude Code's bootstrap and
    /// policy limits, Code Assist's `loadCodeAssist`).
    Account,
    /// The agent's feature flags and experiments (Claude Code's GrowthBook `/api/eval/sdk-…`,
    /// Code Assist's `listExperiments`).
    FeatureFlags,
    /// The host's own housekeeping: signing in, listing models, its settings and tool servers,
    /// the model server's model list (open-webui's `/api/v1/…`, Ollama's `/api/tags`).
    Housekeeping,
    /// A model request outside every conversation of the trace, of no shape named above.
    Aside,
}

impl SideCall {
    /// `title generation`, `routing`, …: what the side call is, in a few words.
    pub fn as_str(self) -> &'static str {
        match self {
            SideCall::Title => "title generation",
            SideCall::Summary => "a summary",
            SideCall::Routing => "routing",
            SideCall::CountTokens => "a token count",
            SideCall::Quota => "a usage or quota probe",
            SideCall::Telemetry => "the agent's own telemetry",
            SideCall::Account => "the agent's account and settings",
            SideCall::FeatureFlags => "the agent's feature flags",
            SideCall::Housekeeping => "the host's own housekeeping",
            SideCall::Aside => "outside the conversation",
        }
    }
}

/// One agent endpoint a hop was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AgentEndpoint {
    /// The agent that calls it (`Claude Code`), when the endpoint tells.
    pub agent: &'static str,
    pub kind: SideCall,
    /// What the call is for, in a few words (`its start-up settings for the account`).
    pub purpose: &'static str,
}

/// How an entry matches a request's path (lower case, without its query).
#[derive(Clone, Copy)]
enum PathIs {
    Exactly(&'static str),
    Under(&'static str),
}

/// Whose request it must be for the entry to apply.
#[derive(Clone, Copy)]
enum Caller {
    /// A path of the agent's own: any host.
    Anyone,
    /// To one host (or its subdomains).
    Host(&'static str),
    /// Claude Code's: to an `anthropic.com` host or with a `claude-cli` user agent.
    ClaudeCode,
}

struct Entry {
    path: PathIs,
    from: Caller,
    agent: &'static str,
    kind: SideCall,
    purpose: &'static str,
}

const fn entry(
    path: PathIs,
    from: Caller,
    agent: &'static str,
    kind: SideCall,
    purpose: &'static str,
) -> Entry {
    Entry {
        path,
        from,
        agent,
        kind,
        purpose,
    }
}

use Caller::{Anyone, ClaudeCode, Host};
use PathIs::{Exactly, Under};
use SideCall::{Account, FeatureFlags, Housekeeping, Quota, Telemetry};

const CLAUDE: &str = "Claude Code";
const GEMINI: &str = "Gemini CLI";

/// The endpoints, most specific first. Claude Code's paths are those of its 2.1 builds (its
/// `BASE_API_URL`, api.anthropic.com); Gemini CLI's Code Assist methods those of 0.61.
#[rustfmt::skip]
const ENDPOINTS: &[Entry] = &[
    entry(Exactly("/api/claude_cli/bootstrap"), Anyone, CLAUDE, Account, "its start-up settings for the account (bootstrap)"),
    entry(Exactly("/api/claude_code_penguin_mode"), Anyone, CLAUDE, FeatureFlags, "whether the organization allows fast mode (penguin mode)"),
    entry(Exactly("/api/claude_code/organizations/metrics_enabled"), Anyone, CLAUDE, Telemetry, "whether the organization lets it send metrics"),
    entry(Exactly("/api/claude_code/metrics"), Anyone, CLAUDE, Telemetry, "its usage metrics"),
    entry(Exactly("/api/claude_code/policy_limits"), Anyone, CLAUDE, Account, "the organization's policy limits"),
    entry(Exactly("/api/claude_code/settings"), Anyone, CLAUDE, Account, "the organization's managed settings"),
    entry(Exactly("/api/claude_code_grove"), Anyone, CLAUDE, Account, "the privacy notice settings (Grove)"),
    entry(Exactly("/api/claude_cli_profile"), Anyone, CLAUDE, Account, "the signed-in account's profile"),
    entry(Under("/api/event_logging/"), ClaudeCode, CLAUDE, Telemetry, "its own event log (usage events, batched)"),
    entry(Under("/api/eval/sdk-"), ClaudeCode, CLAUDE, FeatureFlags, "its feature flags, evaluated for this user (GrowthBook)"),
    entry(Under("/api/features/sdk-"), ClaudeCode, CLAUDE, FeatureFlags, "its feature flags (GrowthBook)"),
    entry(Exactly("/api/oauth/profile"), ClaudeCode, CLAUDE, Account, "the signed-in account's profile"),
    entry(Exactly("/api/oauth/claude_cli/roles"), ClaudeCode, CLAUDE, Account, "the account's roles in its organization"),
    entry(Exactly("/api/oauth/usage"), ClaudeCode, CLAUDE, Quota, "the account's usage against its limits"),
    entry(Under("/api/oauth/account/"), ClaudeCode, CLAUDE, Account, "the account's settings"),
    entry(Exactly("/api/hello"), ClaudeCode, CLAUDE, Housekeeping, "a check that the API can be reached"),
    entry(Exactly("/v1internal:loadcodeassist"), Anyone, GEMINI, Account, "the account's Code Assist tier and project"),
    entry(Exactly("/v1internal:onboarduser"), Anyone, GEMINI, Account, "setting the account up for Code Assist"),
    entry(Exactly("/v1internal:listexperiments"), Anyone, GEMINI, FeatureFlags, "its experiments and feature flags"),
    entry(Exactly("/v1internal:retrieveuserquota"), Anyone, GEMINI, Quota, "the account's remaining quota"),
    entry(Exactly("/log"), Host("play.googleapis.com"), GEMINI, Telemetry, "its usage statistics (Clearcut)"),
    entry(Under("/oauth2/"), Host("googleapis.com"), GEMINI, Account, "the signed-in Google account"),
    entry(Under("/otlp/"), Host("ab.chatgpt.com"), "Codex", Telemetry, "its OpenTelemetry metrics"),
    entry(Exactly("/api.json"), Host("models.dev"), "opencode", Housekeeping, "the catalog of models and providers (models.dev)"),
];

/// The host a hop was sent to, from its URL, lower case.
fn host_of(start: &HopStart) -> String {
    let rest = start.url.split_once("://").map_or("", |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    host.to_ascii_lowercase()
}

fn on_host(host: &str, wanted: &str) -> bool {
    host == wanted
        || host
            .strip_suffix(wanted)
            .is_some_and(|head| head.ends_with('.'))
}

/// The agent endpoint a hop was sent to, if it is one.
pub(crate) fn agent_endpoint(start: &HopStart) -> Option<AgentEndpoint> {
    let path = start.path.split('?').next().unwrap_or_default();
    let path = path.to_ascii_lowercase();
    let host = host_of(start);
    let claude_code = || {
        on_host(&host, "anthropic.com")
            || header_text(&start.request_headers, "user-agent")
                .is_some_and(|agent| agent.trim_start().starts_with("claude-cli"))
    };
    ENDPOINTS
        .iter()
        .find(|entry| {
            let path_matches = match entry.path {
                Exactly(wanted) => path == wanted,
                Under(prefix) => path.starts_with(prefix) && path.len() > prefix.len(),
            };
            path_matches
                && match entry.from {
                    Anyone => true,
                    Host(wanted) => on_host(&host, wanted),
                    ClaudeCode => claude_code(),
                }
        })
        .map(|entry| AgentEndpoint {
            agent: entry.agent,
            kind: entry.kind,
            purpose: entry.purpose,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(url: &str, agent: &str) -> HopStart {
        let path = url
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|at| rest[at..].to_string()))
            .unwrap_or_else(|| "/".into());
        HopStart {
            id: "1".into(),
            route: "r".into(),
            role: tracer_wire::hop::Role::Other,
            transport: tracer_wire::hop::Transport::Http,
            peer: "127.0.0.1:1".into(),
            method: "GET".into(),
            path,
            url: url.into(),
            request_headers: vec![tracer_wire::hop::Header::new("user-agent", agent)],
            started_unix_ns: 0,
            run_id: None,
        }
    }

    #[test]
    fn claude_codes_endpoints_are_named_and_lookalikes_are_not() {
        let bootstrap = start(
            "https://api.anthropic.com/api/claude_cli/bootstrap?x=1",
            "axios/1.8",
        );
        let found = agent_endpoint(&bootstrap).unwrap();
        assert_eq!((found.agent, found.kind), (CLAUDE, Account));
        let eval = start("https://api.anthropic.com/api/eval/sdk-abc", "Bun/1.3");
        assert_eq!(agent_endpoint(&eval).unwrap().kind, FeatureFlags);
        let by_agent = start("http://127.0.0.1:9/api/eval/sdk-abc", "claude-cli/2.1.197");
        assert_eq!(agent_endpoint(&by_agent).unwrap().kind, FeatureFlags);
        // The same path from another program to another host is not Claude Code's.
        let other = start("http://127.0.0.1:9/api/eval/sdk-abc", "curl/8");
        assert_eq!(agent_endpoint(&other), None);
        let lookalike = start("https://notanthropic.com/api/hello", "curl/8");
        assert_eq!(agent_endpoint(&lookalike), None);
        assert_eq!(
            host_of(&start("https://u@h.example:443/x", "")),
            "h.example"
        );
        assert_eq!(host_of(&start("http://[::1]:9/x", "")), "::1");
    }
}
