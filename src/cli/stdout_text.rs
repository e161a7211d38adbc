//! Writing to stdout: recorded text made safe for a terminal, and a closed pipe ends quietly.
//!
//! A reader that went away (`| head`) is not an error (ripgrep's rule): the write is dropped and
//! the command goes on to a clean exit 0, never a panic. Text passes through
//! `tracer_wire::safe_text::multi_line` (newlines and tabs kept, every other control and bidi character
//! shown as an escape), JSON through `tracer_wire::safe_text::json_text`.

use std::io::{ErrorKind, Write};

use tracer_wire::safe_text::{json_text, multi_line};

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

/// A document serialized as pretty JSON and a line end straight to stdout, escaped as
/// [`emit_json_text`] does, a piece at a time: the whole text is never held (a `show --json` of a
/// long trace is as large as its bodies). A closed pipe is not an error.
pub fn emit_json_streamed<T: serde::Serialize>(document: &T) -> anyhow::Result<()> {
    let mut out = SafeJsonOut {
        stdout: std::io::stdout().lock(),
        pending: Vec::new(),
    };
    let written = serde_json::to_writer_pretty(&mut out, document)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Pending JSON text is escaped and passed on once it is this long.
const JSON_PIECE: usize = 64 * 1024;

struct SafeJsonOut<W: Write> {
    stdout: W,
    pending: Vec<u8>,
}

impl<W: Write> SafeJsonOut<W> {
    /// Escapes and writes the pending text up to its last whole character.
    fn pass_on(&mut self) -> std::io::Result<()> {
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(text) => text.len(),
            Err(error) => error.valid_up_to(),
        };
        let text = std::str::from_utf8(&self.pending[..whole]).unwrap_or_default();
        self.stdout.write_all(json_text(text).as_bytes())?;
        self.pending.drain(..whole);
        Ok(())
    }
}

impl<W: Write> Write for SafeJsonOut<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= JSON_PIECE {
            self.pass_on()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.pass_on()?;
        self.stdout.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_json_is_escaped_like_the_whole_text_even_across_pieces() {
        let text: String = "é\u{202e}x\u{85}".repeat(30_000);
        let value = serde_json::json!({ "body": text });
        let mut out = SafeJsonOut {
            stdout: Vec::new(),
            pending: Vec::new(),
        };
        serde_json::to_writer_pretty(&mut out, &value).unwrap();
        out.flush().unwrap();
        let whole = serde_json::to_string_pretty(&value).unwrap();
        assert!(whole.len() > 2 * JSON_PIECE);
        assert_eq!(String::from_utf8(out.stdout).unwrap(), json_text(&whole));
    }
}
