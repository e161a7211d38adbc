//! The `--otlp*` flags shared by `tracer proxy`, `tracer up` and `tracer wrap`, and starting the
//! live exporter they name.

use std::time::Duration;

use clap::Args;

use tracer_export::exporter::config::{DEFAULT_QUEUE, resolve};
use tracer_export::exporter::{OtlpConfig, OtlpFlags};

#[derive(Debug, Clone, Args)]
pub struct OtlpArgs {
    /// Send every trace to an OpenTelemetry receiver (OTLP/HTTP): a base URL, /v1/traces is
    /// appended (default: $OTEL_EXPORTER_OTLP_ENDPOINT; none: no export)
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,

    /// The receiver's traces URL, used as given (wins over --otlp and the environment)
    #[arg(long, value_name = "URL")]
    pub otlp_traces_url: Option<String>,

    /// A header on every export request, e.g. "Authorization=Basic ..." (repeatable; added to
    /// $OTEL_EXPORTER_OTLP_HEADERS)
    #[arg(long = "otlp-header", value_name = "K=V")]
    pub otlp_headers: Vec<String>,

    /// Also send message contents: prompts, answers, tool arguments and results (as recorded)
    #[arg(long)]
    pub otlp_content: bool,

    /// Seconds after a trace's last hop ended before its spans are sent
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = parse_delay)]
    pub otlp_delay: f64,

    /// Spans that may wait for the receiver; past that they are counted as not exported
    #[arg(long, value_name = "SPANS", default_value_t = DEFAULT_QUEUE)]
    pub otlp_queue: usize,
}

fn parse_delay(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && (0.0..=3600.0).contains(&seconds) => Ok(seconds),
        _ => Err(format!(
            "`{text}` is not a number of seconds from 0 to 3600"
        )),
    }
}

impl OtlpArgs {
    /// The flags as the exporter's configuration takes them.
    pub fn flags(&self) -> OtlpFlags {
        OtlpFlags {
            base: self.otlp.clone(),
            traces_url: self.otlp_traces_url.clone(),
            headers: self.otlp_headers.clone(),
            content: self.otlp_content,
            delay: Duration::from_secs_f64(self.otlp_delay),
            queue: self.otlp_queue,
        }
    }

    /// The exporter configuration, None when neither the flags nor the environment name one.
    pub fn config(&self) -> anyhow::Result<Option<OtlpConfig>> {
        Ok(resolve(&self.flags(), |name| std::env::var(name).ok())?)
    }
}
