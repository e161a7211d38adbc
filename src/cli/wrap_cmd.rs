//! `tracer wrap -- COMMAND`: record a stdio MCP server, leaving with the server's exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::WrapArgs;
use tracer_export::exporter::{FINISH_GRACE, start_configured};
use tracer_record::wrap::{WrapOptions, open_store, run as run_wrap};

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
    let options = WrapOptions {
        name,
        command: args.command,
        db,
        max_body: args.max_body,
        redact: args.redaction.redact(),
        run_id: args.run_id,
    };
    let store = open_store(&options).await;
    // wrap runs no grouping of its own: the exporter groups before it looks.
    let exporter = store
        .as_ref()
        .and_then(|store| start_configured(otlp, store, true));
    let code = run_wrap(options, store).await?;
    if let Some(exporter) = exporter {
        let report = exporter.finish(FINISH_GRACE).await;
        tracer_serve::say!("tracer wrap: {}", report.line());
    }
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
