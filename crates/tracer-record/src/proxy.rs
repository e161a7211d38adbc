//! The recording proxy: one listener per route, forwarding that streams, and a bounded tee that
//! hands hop events to the store's writer. The proxy never touches SQL.

pub mod announce;
mod answers;
mod bodiless;
mod body_end;
mod client_process;
mod context;
mod forward;
mod forward_listener;
mod forward_proxy;
pub mod forward_roles;
mod headers;
mod intercept;
mod listen_error;
mod live_tap;
mod loop_guard;
mod prefixed;
mod server;
pub mod steer;
mod tee;
mod tee_pieces;
pub mod tls;
mod tls_end;
mod tls_words;
mod tunnel;
mod upgrade;
mod ws_tee;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use tracer_wire::hop::Role;

pub use forward_proxy::{
    DEFAULT_HANDSHAKE_TIMEOUT, ForwardLimits, ForwardSettings, default_max_connections,
};
pub use listen_error::ListenError;
pub use live_tap::LiveTap;
pub use server::{Proxy, ProxyStats};

/// One listener of the proxy: a name, where it listens, where it forwards, and who is upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub name: String,
    pub role: Role,
    pub listen: SocketAddr,
    /// `http[s]://host:port[/base]`: the request's path and query are joined onto the base path.
    pub(crate) upstream: http::Uri,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RouteError {
    #[error("route `{spec}`: expected ROLE[:NAME]=LISTEN=UPSTREAM")]
    Shape { spec: String },
    #[error("route `{spec}`: {message}")]
    Part { spec: String, message: String },
}

impl Route {
    /// Parses `ROLE[:NAME]=LISTEN=UPSTREAM`, splitting on the first two `=` (an upstream URL may
    /// contain `=` in its query).
    pub fn parse(spec: &str) -> Result<Route, RouteError> {
        let mut parts = spec.splitn(3, '=');
        let (Some(who), Some(listen), Some(upstream)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(RouteError::Shape {
                spec: tracer_wire::redact::redact_userinfo(spec),
            });
        };
        let (role, name) = match who.split_once(':') {
            Some((role, name)) => (role, name),
            None => (who, who),
        };
        Route::new(role, name, listen, upstream).map_err(|message| RouteError::Part {
            spec: tracer_wire::redact::redact_userinfo(spec),
            message,
        })
    }

    /// The upstream as it may be shown or stored: its userinfo (`user:password@`) redacted.
    pub fn shown_upstream(&self) -> String {
        tracer_wire::redact::redact_userinfo(&self.upstream.to_string())
    }

    /// Builds a route from its parts, naming the part that is wrong.
    pub fn new(role: &str, name: &str, listen: &str, upstream: &str) -> Result<Route, String> {
        let role: Role = role.parse()?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(format!(
                "name `{name}` must be letters, digits, `-`, `_` or `.`"
            ));
        }
        let listen = tracer_serve::parse_listen(listen)?;
        let upstream = parse_upstream(upstream)?;
        Ok(Route {
            name: name.to_string(),
            role,
            listen,
            upstream,
        })
    }
}

fn parse_upstream(given: &str) -> Result<http::Uri, String> {
    // Errors show the URL without its userinfo.
    let text = tracer_wire::redact::redact_userinfo(given);
    let uri: http::Uri = given
        .parse()
        .map_err(|e| format!("upstream `{text}` is not a URL: {e}"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(other) => {
            return Err(format!(
                "upstream `{text}`: scheme `{other}` is not supported (use http:// or https://)"
            ));
        }
        None => {
            return Err(format!(
                "upstream `{text}` needs http:// or https:// and a host"
            ));
        }
    }
    if uri.host().is_none() {
        return Err(format!("upstream `{text}` has no host"));
    }
    if uri.query().is_some() {
        return Err(format!("upstream `{text}` must not have a query"));
    }
    Ok(uri)
}

/// How the proxy behaves, whatever its routes.
#[derive(Clone)]
pub struct ProxySettings {
    /// Bytes of each body kept in the record; the rest is forwarded and counted.
    pub max_body: usize,
    /// Time allowed for the upstream's response head. A body that has started has no limit.
    pub upstream_timeout: Duration,
    /// Redact secrets in the record (headers, query, URL credentials, JSON and form fields of
    /// bodies: `tracer_wire::redact`); the wire is never changed.
    pub redact: bool,
    /// Response chunks whose timing is kept per hop.
    pub max_chunks: usize,
    /// How long Ctrl-C waits for in-flight hops before cutting them off.
    pub shutdown_grace: Duration,
    /// Trust and address pins for `https://` upstreams.
    pub upstream_tls: tls::UpstreamTls,
    /// Told of each answer's kept bytes as they pass (`tracer ui`'s streaming view); answers
    /// with a Content-Encoding are not told (their kept bytes are compressed).
    pub live: Option<std::sync::Arc<dyn LiveTap>>,
    /// Fork mode: every request read whole and steered (`tracer fork`); None forwards as is.
    pub steer: Option<std::sync::Arc<dyn steer::Steer>>,
}

impl std::fmt::Debug for ProxySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxySettings")
            .field("max_body", &self.max_body)
            .field("upstream_timeout", &self.upstream_timeout)
            .field("redact", &self.redact)
            .field("max_chunks", &self.max_chunks)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("upstream_tls", &self.upstream_tls)
            .field("live", &self.live.is_some())
            .field("steer", &self.steer.is_some())
            .finish()
    }
}

impl Default for ProxySettings {
    fn default() -> Self {
        Self {
            max_body: 16 * 1024 * 1024,
            upstream_timeout: Duration::from_secs(600),
            redact: true,
            max_chunks: 100_000,
            shutdown_grace: Duration::from_secs(30),
            upstream_tls: tls::UpstreamTls::default(),
            live: None,
            steer: None,
        }
    }
}

/// The routes section of a `tracer.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default, rename = "route")]
    pub(crate) routes: Vec<RouteEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteEntry {
    pub(crate) role: String,
    pub(crate) name: Option<String>,
    pub(crate) listen: String,
    pub(crate) upstream: String,
}

/// Reads routes from a TOML file of `[[route]]` tables.
pub fn routes_from_file(path: &Path) -> anyhow::Result<Vec<Route>> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading config {}", path.display()))?;
    let file: ConfigFile =
        toml::from_str(&text).with_context(|| format!("parsing config {}", path.display()))?;
    file.routes
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let name = entry.name.as_deref().unwrap_or(&entry.role);
            Route::new(&entry.role, name, &entry.listen, &entry.upstream).map_err(|message| {
                anyhow::anyhow!("{}: route {}: {message}", path.display(), i + 1)
            })
        })
        .collect()
}

/// Checks that route names are unique and listen addresses distinct.
pub fn check_routes(routes: &[Route]) -> Result<(), String> {
    if routes.is_empty() {
        return Err("no routes: give at least one --route ROLE[:NAME]=LISTEN=UPSTREAM".into());
    }
    for (i, a) in routes.iter().enumerate() {
        for b in &routes[i + 1..] {
            if a.name == b.name {
                return Err(format!(
                    "two routes are named `{}`: add :NAME to tell them apart",
                    a.name
                ));
            }
            if a.listen == b.listen && a.listen.port() != 0 {
                return Err(format!("two routes listen on {}", a.listen));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_routes_with_and_without_names() {
        let route = Route::parse("model=127.0.0.1:11435=http://127.0.0.1:11434").unwrap();
        assert_eq!(route.name, "model");
        assert_eq!(route.role, Role::Model);
        assert_eq!(route.listen.port(), 11435);
        let route =
            Route::parse("mcp:notes=127.0.0.1:18080=http://127.0.0.1:8080/base?").unwrap_err();
        assert!(route.to_string().contains("query"), "{route}");
        let route = Route::parse("mcp:notes=127.0.0.1:18080=http://127.0.0.1:8080/base").unwrap();
        assert_eq!(route.name, "notes");
        assert_eq!(route.upstream.path(), "/base");
    }

    #[test]
    fn malformed_routes_name_the_bad_part() {
        let cases = [
            ("model=127.0.0.1:1", "ROLE[:NAME]=LISTEN=UPSTREAM"),
            ("llm=127.0.0.1:1=http://x:1", "unknown role `llm`"),
            ("model=localhost=http://x:1", "listen address `localhost`"),
            ("model=127.0.0.1:1=ftp://x:1", "scheme `ftp`"),
            ("model=127.0.0.1:1=x:1", "needs http://"),
            ("model:a b=127.0.0.1:1=http://x:1", "name `a b`"),
        ];
        for (spec, expected) in cases {
            let err = Route::parse(spec).unwrap_err().to_string();
            assert!(err.contains(expected), "{spec}: {err}");
        }
    }

    #[test]
    fn duplicate_names_are_refused() {
        let a = Route::parse("model=127.0.0.1:1=http://x:1").unwrap();
        let b = Route::parse("model=127.0.0.1:2=http://x:2").unwrap();
        assert!(
            check_routes(&[a.clone(), b])
                .unwrap_err()
                .contains("named `model`")
        );
        assert!(check_routes(&[]).is_err());
        assert!(check_routes(&[a]).is_ok());
    }

    #[test]
    fn routes_come_from_toml() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tracer.toml");
        std::fs::write(
            &path,
            "[[route]]\nrole = \"mcp\"\nname = \"notes\"\nlisten = \"127.0.0.1:18080\"\nupstream = \"http://127.0.0.1:8080\"\n",
        )
        .unwrap();
        let routes = routes_from_file(&path).unwrap();
        assert_eq!(routes[0].name, "notes");
        std::fs::write(
            &path,
            "[[route]]\nrole = \"mcp\"\nlisten = \"nope\"\nupstream = \"http://a:1\"\n",
        )
        .unwrap();
        let err = routes_from_file(&path).unwrap_err().to_string();
        assert!(err.contains("route 1") && err.contains("nope"), "{err}");
    }
}
