//! `$OLLAMA_HOST` read exactly as the Ollama Python client reads it (`ollama._client._parse_host`,
//! checked against ollama 0.6.3), so the agent finds the same server the user's tools do.

/// Where the Ollama client looks when `$OLLAMA_HOST` is unset.
const DEFAULT_OLLAMA_PORT: u16 = 11434;

/// Reads `$OLLAMA_HOST` the way the Ollama Python client does: empty means
/// `http://127.0.0.1:11434`; `host`, `host:port`, `:port`, a URL with a scheme, and a path
/// prefix are all accepted; an explicit `http://`/`https://` without a port means 80/443.
pub fn ollama_base_url(ollama_host: Option<&str>) -> String {
    let raw = ollama_host.unwrap_or("").trim();
    let (scheme, hostport, mut port) = match raw.split_once("://") {
        Some((scheme, rest)) if !rest.is_empty() => {
            let port = match scheme {
                "http" => 80,
                "https" => 443,
                _ => DEFAULT_OLLAMA_PORT,
            };
            (scheme, rest, port)
        }
        _ => ("http", raw, DEFAULT_OLLAMA_PORT),
    };
    let (authority, path) = match hostport.find(['/', '?', '#']) {
        Some(at) => hostport.split_at(at),
        None => (hostport, ""),
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let (host, explicit_port) = split_host_port(authority);
    if let Some(explicit) = explicit_port {
        port = explicit;
    }
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    // urllib lower-cases the host name, and so does the client.
    let host = host.to_ascii_lowercase();
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host
    };
    let path = path.trim_matches('/');
    if path.is_empty() {
        format!("{scheme}://{host}:{port}")
    } else {
        format!("{scheme}://{host}:{port}/{path}")
    }
}

/// Splits `host:port`, `[v6]:port`, `[v6]` or `host`; a port that is not a number is ignored.
fn split_host_port(authority: &str) -> (&str, Option<u16>) {
    if let Some(rest) = authority.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return (rest, None);
        };
        let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
        return (host, port);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, port.parse().ok()),
        _ => (authority, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_is_read_like_the_python_client() {
        let cases = [
            (None, "http://127.0.0.1:11434"),
            (Some(""), "http://127.0.0.1:11434"),
            (Some("1.2.3.4"), "http://1.2.3.4:11434"),
            (Some(":56789"), "http://127.0.0.1:56789"),
            (Some("1.2.3.4:56789"), "http://1.2.3.4:56789"),
            (Some("0.0.0.0"), "http://0.0.0.0:11434"),
            (Some("http://1.2.3.4"), "http://1.2.3.4:80"),
            (Some("https://1.2.3.4"), "https://1.2.3.4:443"),
            (Some("https://1.2.3.4:56789"), "https://1.2.3.4:56789"),
            (Some("example.com"), "http://example.com:11434"),
            (Some("example.com:56789"), "http://example.com:56789"),
            (Some("http://example.com"), "http://example.com:80"),
            (
                Some("https://example.com:56789"),
                "https://example.com:56789",
            ),
            (Some("example.com/"), "http://example.com:11434"),
            (Some("example.com:56789/"), "http://example.com:56789"),
            (Some("example.com/path"), "http://example.com:11434/path"),
            (
                Some("example.com:56789/path"),
                "http://example.com:56789/path",
            ),
            (
                Some("https://example.com:56789/path"),
                "https://example.com:56789/path",
            ),
            (
                Some("example.com:56789/path/"),
                "http://example.com:56789/path",
            ),
            (
                Some("[0001:002:003:0004::1]"),
                "http://[0001:002:003:0004::1]:11434",
            ),
            (
                Some("[0001:002:003:0004::1]:56789"),
                "http://[0001:002:003:0004::1]:56789",
            ),
            (
                Some("http://[0001:002:003:0004::1]"),
                "http://[0001:002:003:0004::1]:80",
            ),
            (
                Some("[0001:002:003:0004::1]:56789/path"),
                "http://[0001:002:003:0004::1]:56789/path",
            ),
            (Some("user@Example.COM:1"), "http://example.com:1"),
            (Some("localhost:11434?x=1"), "http://localhost:11434"),
        ];
        for (input, expected) in cases {
            assert_eq!(ollama_base_url(input), expected, "OLLAMA_HOST={input:?}");
        }
    }
}
