//! A listener tracer could not open, in words that name the flag that moves it.

use std::net::SocketAddr;

/// A route's (or the forward proxy's) listener that could not be bound.
#[derive(Debug, thiserror::Error)]
#[error("{who}: cannot listen on {addr}: {reason}{hint}")]
pub struct ListenError {
    /// `route `cloud`` or `--forward`.
    pub(crate) who: String,
    /// The route's name, when it is a route.
    pub route: Option<String>,
    pub(crate) addr: SocketAddr,
    reason: String,
    /// What moves it ("; give …"), when the port is in use.
    hint: String,
    in_use: bool,
}

impl ListenError {
    /// A bind of `addr` that failed with `error`; `flag` says how to move it when in use.
    pub(crate) fn new(
        who: String,
        route: Option<String>,
        addr: SocketAddr,
        error: &std::io::Error,
        flag: &str,
    ) -> Self {
        let in_use = error.kind() == std::io::ErrorKind::AddrInUse;
        let (reason, hint) = if in_use {
            (
                format!("the port is in use ({error})"),
                format!("; another program (or another tracer) has it: {flag}"),
            )
        } else {
            (error.to_string(), String::new())
        };
        ListenError {
            who,
            route,
            addr,
            reason,
            hint,
            in_use,
        }
    }

    /// The same error, naming `flag` as what moves it (for listeners whose address another
    /// flag made, as `tracer up`'s `--agent-port`).
    pub fn moved_by(mut self, flag: &str) -> Self {
        if self.in_use {
            self.hint = format!("; another program (or another tracer) has it: {flag}");
        }
        self
    }
}

/// How a `--route`'s listener is moved.
pub(crate) const ROUTE_FLAG: &str = "give the route another LISTEN in --route ROLE:NAME=LISTEN=UPSTREAM \
     (127.0.0.1:0 takes a free port)";
/// How the forward proxy's listener is moved.
pub(crate) const FORWARD_FLAG: &str = "give --forward another ADDR (127.0.0.1:0 takes a free port)";
