//! Writing to stdout: recorded text made safe for a terminal, and a closed pipe ends quietly.
//!
//! A reader that went away (`| head`) is not an error (ripgrep's rule): the write is dropped and
//! the command goes on to a clean exit 0, never a panic. Text passes through
//! `wire::safe_text::multi_line` (newlines and tabs kept, every other control and bidi character
//! shown as an escape), JSON through `wire::safe_text::json_text`.

use std::io::{ErrorKind, Write};

use crate::wire::safe_text::{json_text, multi_line};

/// Writes `text` to stdout with its control characters escaped; a closed pipe is not an error.
pub fn emit(text: &str) -> std::io::Result<()> {
    emit_bytes(multi_line(text).as_bytes())
}

/// Writes `bytes` to stdout as they are; a closed pipe is not an error.
pub fn emit_bytes(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Pretty JSON and a line end.
pub fn emit_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    emit_json_text(&text)
}

/// JSON text as serde wrote it, with DEL, C1 and bidi controls escaped as `\uXXXX`.
pub fn emit_json_text(text: &str) -> anyhow::Result<()> {
    Ok(emit_bytes(json_text(text).as_bytes())?)
}

/// `println!` for stdout through [`emit`]: `outln!("…", args)?`.
macro_rules! outln {
    () => {
        $crate::cli::stdout_text::emit("\n")
    };
    ($($arg:tt)*) => {
        $crate::cli::stdout_text::emit(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for stdout through [`emit`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::stdout_text::emit(&format!($($arg)*))
    };
}

pub(crate) use {out, outln};
