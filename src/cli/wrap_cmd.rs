//! `tracer wrap -- COMMAND`: record a stdio MCP server, leaving with the server's exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::WrapArgs;
use crate::wrap::{WrapOptions, run as run_wrap};

pub async fn run(db: PathBuf, args: WrapArgs) -> anyhow::Result<ExitCode> {
    let name = match args.name {
        Some(name) => name,
        None => args
            .command
            .first()
            .and_then(|program| Path::new(program).file_name())
            .map_or_else(|| "stdio".to_string(), |n| n.to_string_lossy().into_owned()),
    };
    let otlp = args.otlp.config()?;
    let code = run_wrap(WrapOptions {
        name,
        command: args.command,
        db,
        max_body: args.max_body,
        redact: args.redaction.redact(),
        otlp,
        run_id: args.run_id,
    })
    .await?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
