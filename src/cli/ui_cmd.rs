//! `tracer ui`: the live web UI over a database: its URL as the first line on stderr, served
//! until Ctrl-C (waiting for the database when nothing was recorded yet).

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::ui_beside::{AppDiff, say_url};
use tracer_serve::stop_signal::shutdown_on_signals;
use tracer_store::Store;
use tracer_web::{UiOptions, UiServer, Watch};

#[derive(Debug, Args)]
pub struct UiArgs {
    /// Where the page listens; an address beyond loopback needs the token the URL carries
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,
    /// Open the page in the desktop's browser
    #[arg(long)]
    pub open: bool,
}

pub async fn run(db: &Path, args: UiArgs) -> anyhow::Result<ExitCode> {
    let (requested, _) = shutdown_on_signals("tracer ui").into_parts();
    let mut requested = Box::pin(requested);
    let mut told = false;
    while !db.exists() {
        if !told {
            tracer_serve::say!(
                "tracer ui: no database at {} yet: waiting for a recording (tracer run, tracer proxy, tracer demo)",
                db.display()
            );
            told = true;
        }
        tokio::select! {
            () = &mut requested => return Ok(ExitCode::SUCCESS),
            () = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
    let store = Store::open_existing(db).await?;
    let options = UiOptions::new(args.listen, Watch::PollAndGroup);
    let server = UiServer::bind(store.clone(), options, Some(AppDiff::shared())).await?;
    say_url(&server);
    if args.open {
        open_browser(server.url());
    }
    let served = server.run(requested).await;
    store.close().await;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Opens `url` in the desktop's browser, or says why it could not.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let opened = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(error) = opened {
        tracer_serve::say!("tracer ui: could not open a browser ({opener}: {error}); open {url}");
    }
}
