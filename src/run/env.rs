//! The environment a traced program gets: the forward proxy for every common runtime, and trust
//! in tracer's CA (a bundle of the system's roots plus the CA for those that take one file).
//! `tracer ca --env` prints the same set.

use std::net::SocketAddr;
use std::path::Path;

/// The proxy variables, both cases: curl, Python, Go, Rust (reqwest), Node's `fetch` with
/// `NODE_USE_ENV_PROXY`, Bun, git.
pub const PROXY_VARIABLES: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The variables that name one file of roots, which replaces the system's: they get the bundle
/// (the system's roots plus tracer's CA). OpenSSL and rustls (`SSL_CERT_FILE`), Python requests,
/// curl, Codex, git, cargo, the AWS SDKs, Deno, pip, httplib2, gcloud, Nix.
pub const BUNDLE_VARIABLES: [&str; 12] = [
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "CODEX_CA_CERTIFICATE",
    "GIT_SSL_CAINFO",
    "CARGO_HTTP_CAINFO",
    "AWS_CA_BUNDLE",
    "DENO_CERT",
    "PIP_CERT",
    "HTTPLIB2_CA_CERTS",
    "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
    "NIX_SSL_CERT_FILE",
];

/// Node and Bun add these certificates to their own roots (the bundle, as `tracer ca --env`
/// has always printed it).
pub const NODE_EXTRA: &str = "NODE_EXTRA_CA_CERTS";

/// Node's built-in `fetch` (undici) and `http` honour the proxy variables only with this set.
pub const NODE_USE_ENV_PROXY: &str = "NODE_USE_ENV_PROXY";

/// The trust variables: each bundle variable and Node's at `bundle`, and Node told to use the
/// proxy variables.
pub fn trust_env(bundle: &Path) -> Vec<(&'static str, String)> {
    let bundle = bundle.display().to_string();
    let mut env: Vec<(&'static str, String)> = BUNDLE_VARIABLES
        .iter()
        .map(|name| (*name, bundle.clone()))
        .collect();
    env.push((NODE_EXTRA, bundle));
    env.push((NODE_USE_ENV_PROXY, "1".to_string()));
    env
}

/// Every proxy variable at `http://ADDR`.
pub fn proxy_env(proxy: SocketAddr) -> Vec<(&'static str, String)> {
    let url = format!("http://{proxy}");
    PROXY_VARIABLES
        .iter()
        .map(|name| (*name, url.clone()))
        .collect()
}

/// The whole set a traced program gets (`NO_PROXY` is left as the user set it).
pub fn child_env(proxy: SocketAddr, bundle: &Path) -> Vec<(&'static str, String)> {
    let mut env = proxy_env(proxy);
    env.extend(trust_env(bundle));
    env
}

/// `export NAME='VALUE'` lines, quoted for sh.
pub fn export_lines(env: &[(&str, String)]) -> String {
    env.iter()
        .map(|(name, value)| format!("export {name}='{}'\n", value.replace('\'', r"'\''")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_gets_the_proxy_and_the_bundle() {
        let addr: SocketAddr = "127.0.0.1:4321".parse().unwrap();
        let env = child_env(addr, Path::new("/ca/bundle.pem"));
        let get = |name: &str| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.as_str())
        };
        for name in PROXY_VARIABLES {
            assert_eq!(get(name), Some("http://127.0.0.1:4321"), "{name}");
        }
        for name in BUNDLE_VARIABLES {
            assert_eq!(get(name), Some("/ca/bundle.pem"), "{name}");
        }
        assert_eq!(get(NODE_EXTRA), Some("/ca/bundle.pem"));
        assert_eq!(get(NODE_USE_ENV_PROXY), Some("1"));
        assert_eq!(get("NO_PROXY"), None);
    }

    #[test]
    fn export_lines_are_quoted_for_the_shell() {
        let lines = export_lines(&[("SSL_CERT_FILE", "/home/o'neil/b.pem".into())]);
        assert_eq!(lines, "export SSL_CERT_FILE='/home/o'\\''neil/b.pem'\n");
    }
}
