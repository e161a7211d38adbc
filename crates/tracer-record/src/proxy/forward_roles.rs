//! Forward mode without routes: which hosts are intercepted (`--intercept`), and who a request
//! is for (`--host-role`, else model API paths, MCP headers or a JSON-RPC body, else `other`).

use std::str::FromStr;

use http::HeaderMap;

use tracer_wire::hop::Role;

/// A host pattern: `api.openai.com`, `*.example.com` (any subdomain), or `*` (every host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern(String);

impl HostPattern {
    pub(crate) fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match self.0.strip_prefix("*.") {
            _ if self.0 == "*" => true,
            Some(suffix) => host
                .strip_suffix(suffix)
                .is_some_and(|head| head.ends_with('.') && head.len() > 1),
            None => host == self.0,
        }
    }
}

impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for HostPattern {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let body = text.strip_prefix("*.").unwrap_or(&text);
        let valid = text == "*"
            || (!body.is_empty()
                && body
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-.:[]_".contains(c)));
        if valid {
            Ok(HostPattern(text))
        } else {
            Err(format!(
                "host pattern `{text}`: expected a host, `*.domain` or `*`"
            ))
        }
    }
}

/// `--intercept a,b` (repeatable) parsed into patterns.
pub fn parse_patterns(text: &str) -> Result<Vec<HostPattern>, String> {
    text.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(str::parse)
        .collect()
}

/// One `--host-role HOST=ROLE[:NAME]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRole {
    pub(crate) pattern: HostPattern,
    pub(crate) role: Role,
    pub(crate) name: Option<String>,
}

impl FromStr for HostRole {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, String> {
        let (host, who) = spec
            .split_once('=')
            .ok_or_else(|| format!("--host-role `{spec}`: expected HOST=ROLE[:NAME]"))?;
        let (role, name) = match who.split_once(':') {
            Some((role, name)) => (role, Some(name.to_string())),
            None => (who, None),
        };
        let role: Role = role
            .parse()
            .map_err(|e: String| format!("--host-role `{spec}`: {e}"))?;
        if let Some(name) = &name
            && (name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)))
        {
            return Err(format!(
                "--host-role `{spec}`: name `{name}` must be letters, digits, `-`, `_` or `.`"
            ));
        }
        Ok(HostRole {
            pattern: host.parse()?,
            role,
            name,
        })
    }
}

/// Paths of model APIs: Ollama, OpenAI (chat, completions, responses), Anthropic, Gemini.
const MODEL_PATHS: [&str; 6] = [
    "/api/chat",
    "/api/generate",
    "/chat/completions",
    "/v1/completions",
    "/v1/responses",
    "/v1/messages",
];

/// Gemini's model methods (Google AI, Vertex AI, Code Assist's `/v1internal:…`).
const GEMINI_METHODS: [&str; 3] = [":generateContent", ":streamGenerateContent", ":countTokens"];

/// Hosts whose every request is for a model: Google AI, Vertex AI (`REGION-aiplatform…`) and
/// the Code Assist API Gemini CLI talks to after a Google sign-in.
pub(crate) fn role_from_host(host: &str) -> Option<Role> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let model = host == "generativelanguage.googleapis.com"
        || host == "aiplatform.googleapis.com"
        || host.ends_with("-aiplatform.googleapis.com")
        || host == "cloudcode-pa.googleapis.com"
        || host.ends_with("-cloudcode-pa.googleapis.com");
    model.then_some(Role::Model)
}

/// The role a request's path and headers show, when they show one.
pub(crate) fn role_from_head(path: &str, headers: &HeaderMap) -> Option<Role> {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let path = path.trim_end_matches('/');
    let model = MODEL_PATHS.iter().any(|p| path.ends_with(p))
        || GEMINI_METHODS.iter().any(|m| path.ends_with(m));
    if model {
        return Some(Role::Model);
    }
    let mcp = ["mcp-protocol-version", "mcp-method", "mcp-session-id"]
        .iter()
        .any(|name| headers.contains_key(*name));
    mcp.then_some(Role::Mcp)
}

/// Whether a request body (or its first bytes) is JSON-RPC: an MCP message.
pub(crate) fn looks_like_jsonrpc(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let trimmed = text.trim_start();
    (trimmed.starts_with('{') || trimmed.starts_with('['))
        && (text.contains("\"jsonrpc\":\"2.0\"") || text.contains("\"jsonrpc\": \"2.0\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_hosts_and_subdomains() {
        let any: HostPattern = "*".parse().unwrap();
        let sub: HostPattern = "*.Example.com".parse().unwrap();
        let one: HostPattern = "api.openai.com".parse().unwrap();
        assert!(any.matches("x.y"));
        assert!(sub.matches("api.example.com") && sub.matches("a.b.example.com"));
        assert!(!sub.matches("example.com") && !sub.matches("badexample.com"));
        assert!(one.matches("API.openai.com") && !one.matches("openai.com"));
        assert_eq!(parse_patterns("a.com, *.b.com").unwrap().len(), 2);
        assert!(parse_patterns("a b").is_err());
    }

    #[test]
    fn host_roles_parse() {
        let role: HostRole = "api.anthropic.com=model:claude".parse().unwrap();
        assert_eq!(role.role, Role::Model);
        assert_eq!(role.name.as_deref(), Some("claude"));
        assert!("x=llm".parse::<HostRole>().is_err());
        assert!("x".parse::<HostRole>().is_err());
    }

    #[test]
    fn roles_come_from_paths_headers_and_bodies() {
        let none = HeaderMap::new();
        for path in [
            "/v1/chat/completions",
            "/openai/v1/chat/completions?x=1",
            "/v1/responses",
            "/v1/messages",
            "/api/chat",
            "/v1beta/models/gemini-2.5:generateContent?key=k",
        ] {
            assert_eq!(role_from_head(path, &none), Some(Role::Model), "{path}");
        }
        assert_eq!(role_from_head("/mcp", &none), None);
        for path in [
            "/v1/projects/p/locations/l/publishers/google/models/g:streamGenerateContent?alt=sse",
            "/v1internal:streamGenerateContent?alt=sse",
            "/v1beta/models/gemini-2.5-pro:countTokens",
        ] {
            assert_eq!(role_from_head(path, &none), Some(Role::Model), "{path}");
        }
        for host in [
            "generativelanguage.googleapis.com",
            "us-central1-aiplatform.googleapis.com",
            "cloudcode-pa.googleapis.com",
        ] {
            assert_eq!(role_from_host(host), Some(Role::Model), "{host}");
        }
        assert_eq!(role_from_host("oauth2.googleapis.com"), None);
        let mut mcp = HeaderMap::new();
        mcp.insert("mcp-protocol-version", "2025-11-25".parse().unwrap());
        assert_eq!(role_from_head("/mcp", &mcp), Some(Role::Mcp));
        assert!(looks_like_jsonrpc(
            br#" {"jsonrpc":"2.0","id":1,"method":"initialize"}"#
        ));
        assert!(!looks_like_jsonrpc(br#"{"model":"x"}"#));
    }
}
