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
        // A stderr that cannot be written (a closed pipe) loses the line, never panics.
        .log_internal_errors(false)
        .with_ansi(colour_wanted(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .with_target(false)
        .try_init();
}

/// Writes one line to stderr, ignoring a stderr that cannot be written (a closed pipe: `| tee`
/// killed by the same Ctrl-C): a message is never worth a panic, least of all on the way out.
pub fn say_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
    let _ = err.flush();
}

/// `eprintln!` that never panics: see [`say_line`].
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::logging::say_line(format_args!($($arg)*))
    };
}

/// Colour codes on stderr: only for a terminal, and never when `NO_COLOR` holds a value.
fn colour_wanted(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
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
