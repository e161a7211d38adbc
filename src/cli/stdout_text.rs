//! Writing a command's whole output to stdout, where a reader that went away (`| head`) ends the
//! command quietly instead of a panic.

use std::io::{ErrorKind, Write};

/// Writes `text` to stdout; a closed pipe is not an error.
pub fn emit(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Pretty JSON and a line end.
pub fn emit_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(emit(&text)?)
}
