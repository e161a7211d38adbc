//! Which hosts `tracer run` decrypts by default: the known model APIs, and the hosts of the base
//! URLs and remote MCP URLs found in the program's environment, its arguments and its agent's
//! configuration. Every other host is tunnelled (one row: host, bytes, duration).

use std::collections::BTreeSet;

/// Model APIs decrypted whatever the configuration says (`*.` matches every subdomain).
pub const KNOWN_MODEL_HOSTS: &[&str] = &[
    "api.anthropic.com",
    "api.openai.com",
    "chatgpt.com",
    "generativelanguage.googleapis.com",
    "cloudcode-pa.googleapis.com",
    "*.aiplatform.googleapis.com",
    "aiplatform.googleapis.com",
    "*.openai.azure.com",
    "*.services.ai.azure.com",
    "api.mistral.ai",
    "api.groq.com",
    "openrouter.ai",
    "api.deepseek.com",
    "api.x.ai",
    "api.together.xyz",
    "api.fireworks.ai",
    "api.cohere.com",
    "api.perplexity.ai",
    "api.moonshot.ai",
    "dashscope.aliyuncs.com",
    "dashscope-intl.aliyuncs.com",
    "opencode.ai",
    "api.githubcopilot.com",
    "api.cerebras.ai",
];

/// The host of an `http://` or `https://` URL, lowercased; None for anything else.
pub fn url_host(text: &str) -> Option<String> {
    let text = text.trim();
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let valid = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:".contains(c));
    valid.then_some(host)
}

/// Whether an environment variable's name says it holds an endpoint (`ANTHROPIC_BASE_URL`,
/// `OPENAI_API_BASE`, `CODE_ASSIST_ENDPOINT`, `OLLAMA_HOST`, …); proxies are not endpoints.
fn names_an_endpoint(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    !name.contains("PROXY")
        && ["_URL", "_BASE", "_ENDPOINT", "_HOST", "_BASEURL", "_API"]
            .iter()
            .any(|end| name.ends_with(end))
}

/// The hosts of the URLs in endpoint variables and in the command's own arguments.
pub fn hosts_in_env_and_args<'a>(
    env: impl IntoIterator<Item = (&'a str, &'a str)>,
    args: &[String],
) -> BTreeSet<String> {
    let from_env = env
        .into_iter()
        .filter(|(name, _)| names_an_endpoint(name))
        .filter_map(|(_, value)| url_host(value));
    let from_args = args.iter().filter_map(|arg| {
        // `--base-url=https://…` as well as `--base-url https://…`.
        let value = arg.split_once('=').map_or(arg.as_str(), |(_, v)| v);
        url_host(value).or_else(|| url_host(arg))
    });
    from_env.chain(from_args).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_from_urls_only() {
        assert_eq!(
            url_host("https://api.example.test/v1").as_deref(),
            Some("api.example.test")
        );
        assert_eq!(
            url_host("http://u:p@127.0.0.1:8080/mcp").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(url_host("http://[::1]:80/").as_deref(), Some("::1"));
        assert_eq!(url_host("HTTPS://X"), None);
        assert_eq!(url_host("ftp://x"), None);
        assert_eq!(url_host("https://"), None);
    }

    #[test]
    fn endpoint_variables_and_arguments_name_hosts() {
        let env = [
            ("ANTHROPIC_BASE_URL", "https://llm.corp.test"),
            ("HTTPS_PROXY", "http://proxy.test:3128"),
            ("HOME", "/root"),
            ("OLLAMA_HOST", "http://gpu.lan:11434"),
        ];
        let args = vec![
            "--openai-base-url".to_string(),
            "https://qwen.test/v1".to_string(),
            "--endpoint=https://other.test".to_string(),
        ];
        let hosts = hosts_in_env_and_args(env, &args);
        let hosts: Vec<&str> = hosts.iter().map(String::as_str).collect();
        assert_eq!(
            hosts,
            ["gpu.lan", "llm.corp.test", "other.test", "qwen.test"]
        );
    }
}
