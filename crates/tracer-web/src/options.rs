//! What a UI server is started with: where it listens, its token, and what it may call on.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use tracer_store::Store;

/// Where the UI listens and who may read it.
#[derive(Debug, Clone)]
pub struct UiOptions {
    /// The address to listen on (loopback by default: `127.0.0.1:7878`).
    pub listen: SocketAddr,
    /// The token a request must carry (`?token=`, then a cookie): required when `listen` is not
    /// loopback. `UiOptions::new` makes a random one then.
    pub token: Option<String>,
    /// What the server watches for changes to push (see [`Watch`]).
    pub watch: Watch,
}

/// How the server learns that the database changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// It polls the store and groups hops nobody grouped (`tracer ui` over a database that
    /// something else may be recording into, or nothing).
    PollAndGroup,
    /// It polls the store; grouping is the recording process's (`--ui` beside a recording).
    Poll,
}

impl UiOptions {
    /// Options for `listen`: a random 32-hex-digit token when it is not loopback.
    pub fn new(listen: SocketAddr, watch: Watch) -> UiOptions {
        let token = (!listen.ip().is_loopback()).then(random_token);
        UiOptions {
            listen,
            token,
            watch,
        }
    }
}

/// 128 random bits as hex.
fn random_token() -> String {
    use rand::Rng;
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Two traces compared as `tracer diff` compares them, for the page's diff view.
#[derive(Debug, Clone)]
pub struct DiffPage {
    /// `tracer diff --json`'s document.
    pub json: serde_json::Value,
    /// `tracer diff`'s text.
    pub text: String,
}

/// The future a [`DiffTraces`] gives.
pub type DiffFuture<'a> = Pin<Box<dyn Future<Output = Result<DiffPage, String>> + Send + 'a>>;

/// How two traces are compared: the app's `tracer diff`, handed in (it lives above this crate).
pub trait DiffTraces: Send + Sync {
    /// Traces `a` and `b` (ids or prefixes) compared, or why they cannot be.
    fn diff<'a>(&'a self, store: &'a Store, a: &'a str, b: &'a str) -> DiffFuture<'a>;
}
