//! Logging setup: human-readable lines on stderr, filtered by `-v` or `RUST_LOG`.

use tracing_subscriber::EnvFilter;

/// Sends logs to stderr: warnings by default, more with each `-v`; `RUST_LOG` wins when set.
pub fn init_stderr(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A second init (tests, embedding) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
