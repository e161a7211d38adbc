//! Who may read the UI, checked before any route: the `Host` a browser sent (a page of another
//! site that rebinds its name to loopback is refused), the token of a UI listening beyond
//! loopback (given once in the URL, then kept in a cookie), reads only; and the headers every
//! answer carries (a Content-Security-Policy with no inline script and no `eval`).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::{self, HeaderValue};
use http::{Method, StatusCode};

/// The cookie that carries the token once the URL gave it.
pub(crate) const COOKIE: &str = "tracer_ui";

/// The page's policy: its own scripts, styles and requests only; nothing inline, no `eval`, no
/// plugin, no frame, no base URL of another site.
pub(crate) const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
     base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// What the guard knows of the server.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    pub(crate) listen: SocketAddr,
    pub(crate) token: Option<String>,
}

/// The guard, then the route, then the headers.
pub(crate) async fn check(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = match guard.refusal(&request) {
        None => next.run(request).await,
        Some(refused) => refused,
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}

impl Guard {
    /// The answer refusing the request, or None when it may go on.
    fn refusal(&self, request: &Request) -> Option<Response> {
        if request.method() != Method::GET && request.method() != Method::HEAD {
            // Nothing here changes anything: no state-changing request, so no CSRF to guard.
            return Some(refused(
                StatusCode::METHOD_NOT_ALLOWED,
                "tracer ui only reads",
            ));
        }
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        if !self.host_allowed(host) {
            return Some(refused(
                StatusCode::FORBIDDEN,
                "tracer ui answers only to its own address (Host header refused)",
            ));
        }
        let Some(token) = &self.token else {
            return None;
        };
        if let Some(given) = query_token(request.uri().query())
            && same(given, token)
        {
            // Once from the URL, then from the cookie: the token leaves the address bar.
            let cookie = format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
            let mut response = (StatusCode::SEE_OTHER, "").into_response();
            let path = request.uri().path().to_string();
            if let Ok(location) = HeaderValue::from_str(&path) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            if let Ok(cookie) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            return Some(response);
        }
        if cookie_token(request).is_some_and(|given| same(given, token)) {
            return None;
        }
        Some(refused(
            StatusCode::UNAUTHORIZED,
            "this tracer ui needs its token: open the URL it printed (…/?token=…)",
        ))
    }

    /// A loopback listener answers to loopback names with its port; one beyond loopback (whose
    /// token guards it) to any name with its port.
    fn host_allowed(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        if port != Some(self.listen.port()) {
            return false;
        }
        if !self.listen.ip().is_loopback() {
            return true;
        }
        let name = name.trim_start_matches('[').trim_end_matches(']');
        name.eq_ignore_ascii_case("localhost")
            || name
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// `name` and port of a Host header (`[::1]:7878`, `localhost:7878`).
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    if host.is_empty() {
        return None;
    }
    let (name, port) = match host.rfind(':') {
        Some(at) if !host[at..].contains(']') => (&host[..at], host[at + 1..].parse().ok()),
        _ => (host, Some(80)),
    };
    Some((name, port))
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

fn cookie_token(request: &Request) -> Option<&str> {
    request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

/// Equal, in a time that does not depend on where they differ.
fn same(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refused(status: StatusCode, words: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        words,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(listen: &str) -> Guard {
        Guard {
            listen: listen.parse().unwrap(),
            token: None,
        }
    }

    #[test]
    fn a_loopback_ui_answers_to_loopback_names_with_its_port_only() {
        let g = guard("127.0.0.1:7878");
        for host in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LOCALHOST:7878",
            "[::1]:7878",
        ] {
            assert!(g.host_allowed(host), "{host}");
        }
        for host in [
            "evil.example:7878",
            "127.0.0.1:80",
            "127.0.0.1",
            "",
            "10.0.0.1:7878",
        ] {
            assert!(!g.host_allowed(host), "{host}");
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same("abc", "abc"));
        assert!(!same("abd", "abc"));
        assert!(!same("ab", "abc"));
    }
}
