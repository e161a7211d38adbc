//! The web UI served beside a recording (`--ui [ADDR]` on `proxy`, `run` and `up`): bound before
//! the recording starts, told of each answer as it streams, stopped with the recording; and the
//! app's `tracer diff` handed to the page.

use std::net::SocketAddr;
use std::sync::Arc;

use clap::Args;

use crate::compare::diff::Diff;
use crate::compare::diff_text::render;
use crate::compare::load::load_run;
use tracer_record::proxy::LiveTap;
use tracer_store::Store;
use tracer_web::{DiffFuture, DiffPage, DiffTraces, LiveFeed, UiOptions, UiServer, Watch};

/// `--ui [ADDR]`: also serve the web UI from this process.
#[derive(Debug, Clone, Args)]
pub struct UiFlag {
    /// Also serve the live web UI (`tracer ui`) from this process, on ADDR
    /// (default 127.0.0.1:7878)
    #[arg(
        long = "ui",
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:7878"
    )]
    pub ui: Option<SocketAddr>,
}

/// A UI serving beside a recording, until the recording stops.
pub struct UiBeside {
    url: String,
    addr: SocketAddr,
    feed: LiveFeed,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<Result<(), tracer_web::UiError>>,
}

impl UiBeside {
    /// Binds and starts the UI when `flag` asks for one (its URL is said by [`UiBeside::say`]).
    pub async fn start(flag: &UiFlag, store: &Store) -> anyhow::Result<Option<UiBeside>> {
        let Some(listen) = flag.ui else {
            return Ok(None);
        };
        let options = UiOptions::new(listen, Watch::Poll);
        let server = UiServer::bind(store.clone(), options, Some(AppDiff::shared())).await?;
        let (url, addr) = (server.url().to_string(), server.local_addr());
        let feed = server.live_feed();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        Ok(Some(UiBeside {
            url,
            addr,
            feed,
            stop,
            served,
        }))
    }

    /// Says where the page is (and warns when it listens beyond loopback).
    pub fn say(&self) {
        say_where(&self.url, self.addr);
    }

    /// What the proxy tells of each answer as it passes.
    pub fn tap(&self) -> Arc<dyn LiveTap> {
        Arc::new(FeedTap(self.feed.clone()))
    }

    /// Stops the UI (its pages are let go of) and waits for it.
    pub async fn finish(self) {
        let _ = self.stop.send(());
        match self.served.await {
            Ok(Err(error)) => tracer_serve::say!("tracer ui: {error}"),
            Err(error) => tracer_serve::say!("tracer ui: {error}"),
            Ok(Ok(())) => {}
        }
    }
}

/// The tap of an optional UI: None when no UI is served.
pub fn tap_of(ui: Option<&UiBeside>) -> Option<Arc<dyn LiveTap>> {
    ui.map(UiBeside::tap)
}

/// The UI's first line on stderr (its URL), and a warning when it listens beyond loopback.
pub fn say_url(server: &UiServer) {
    say_where(server.url(), server.local_addr());
}

fn say_where(url: &str, addr: SocketAddr) {
    tracer_serve::say!("tracer ui: {url}");
    if !addr.ip().is_loopback() {
        tracer_serve::say!(
            "tracer ui: warning: listening on {addr}, not a loopback address: anyone who can reach \
             it and has the token in this URL can read every recorded body"
        );
    }
}

/// The page's stream view fed by the proxy.
struct FeedTap(LiveFeed);

impl LiveTap for FeedTap {
    fn answer_bytes(&self, hop_id: &str, bytes: &[u8]) {
        self.0.answer_bytes(hop_id, bytes);
    }
}

/// `tracer diff` for the page.
pub struct AppDiff;

impl AppDiff {
    pub fn shared() -> Arc<dyn DiffTraces> {
        Arc::new(AppDiff)
    }
}

impl DiffTraces for AppDiff {
    fn diff<'a>(&'a self, store: &'a Store, a: &'a str, b: &'a str) -> DiffFuture<'a> {
        Box::pin(async move {
            let a = load_run(Some(store), a).await.map_err(|e| e.to_string())?;
            let b = load_run(Some(store), b).await.map_err(|e| e.to_string())?;
            let diff = Diff::new(a, b);
            Ok(DiffPage {
                json: diff.to_json(),
                text: render(&diff),
            })
        })
    }
}
