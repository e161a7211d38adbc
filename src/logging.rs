//! Logging setup: human-readable lines on stderr, filtered by `-v` or `RUST_LOG`.
//!
//! Colour only when stderr is a terminal and `NO_COLOR` is not set (<https://no-color.org>);
//! a pipe or a file gets plain lines. The reference binaries set up theirs the same way.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Sends logs to stderr: warnings by default, more with each `-v`; `RUST_LOG` wins when set.
pub fn init_stderr(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    init_stderr_with(default);
}

/// Sends logs to stderr, filtered by `RUST_LOG`, else by `default` (e.g. `"info"`).
pub fn init_stderr_with(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A second init (tests, embedding) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour_wanted(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .with_target(false)
        .try_init();
}

/// Colour codes on stderr: only for a terminal, and never when `NO_COLOR` holds a value.
pub fn colour_wanted(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(|value| value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::colour_wanted;
    use std::ffi::OsStr;

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(colour_wanted(true, None));
        assert!(colour_wanted(true, Some(OsStr::new(""))));
        assert!(!colour_wanted(true, Some(OsStr::new("1"))));
        assert!(!colour_wanted(false, None));
    }
}
