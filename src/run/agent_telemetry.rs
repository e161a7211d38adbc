//! Turning a known agent's own OpenTelemetry on for one `tracer run`, pointed at tracer's
//! receiver: variables and command-line overrides for this run only (the user's configuration
//! files are never written). Claude Code and Gemini CLI read variables; Codex takes `-c` keys.

use super::agents::KnownAgent;

/// What the run adds so the agent exports its telemetry to `endpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryOn {
    pub env: Vec<(String, String)>,
    /// Put before the user's arguments.
    pub args: Vec<String>,
    /// How, for the first line.
    pub how: &'static str,
}

/// The switches for `agent`, or None for an agent tracer cannot turn telemetry on for.
pub fn turn_on(agent: KnownAgent, endpoint: &str) -> Option<TelemetryOn> {
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let logs = format!("{endpoint}/v1/logs");
    let traces = format!("{endpoint}/v1/traces");
    let metrics = format!("{endpoint}/v1/metrics");
    // Each signal's own endpoint variable as well: one the user set would win over the base.
    let standard = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", logs.as_str()),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces.as_str()),
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", metrics.as_str()),
        ("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"),
    ];
    match agent {
        KnownAgent::ClaudeCode => {
            let mut env = pairs(&standard);
            env.extend(pairs(&[
                ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
                ("OTEL_LOGS_EXPORTER", "otlp"),
                ("OTEL_METRICS_EXPORTER", "otlp"),
                ("OTEL_LOG_USER_PROMPTS", "1"),
                ("OTEL_LOG_TOOL_DETAILS", "1"),
                // Events flushed within a second, so the last ones arrive before the agent exits.
                ("OTEL_LOGS_EXPORT_INTERVAL", "1000"),
                ("OTEL_METRIC_EXPORT_INTERVAL", "5000"),
            ]));
            Some(TelemetryOn {
                env,
                args: Vec::new(),
                how: "CLAUDE_CODE_ENABLE_TELEMETRY and OTEL_* variables",
            })
        }
        KnownAgent::GeminiCli => {
            let mut env = pairs(&standard);
            env.extend(pairs(&[
                ("GEMINI_TELEMETRY_ENABLED", "true"),
                ("GEMINI_TELEMETRY_TARGET", "local"),
                ("GEMINI_TELEMETRY_OTLP_ENDPOINT", endpoint),
                ("GEMINI_TELEMETRY_OTLP_PROTOCOL", "http"),
                ("GEMINI_TELEMETRY_LOG_PROMPTS", "true"),
                ("GEMINI_TELEMETRY_USE_COLLECTOR", "false"),
                // Gemini CLI runs the OpenTelemetry NodeSDK, which this switches off.
                ("OTEL_SDK_DISABLED", "false"),
            ]));
            Some(TelemetryOn {
                env,
                args: Vec::new(),
                how: "GEMINI_TELEMETRY_* variables",
            })
        }
        KnownAgent::Codex => {
            let exporter =
                |url: &str| format!("{{otlp-http={{endpoint=\"{url}\", protocol=\"binary\"}}}}");
            let args = vec![
                "-c".to_string(),
                format!("otel.exporter={}", exporter(&logs)),
                "-c".to_string(),
                "otel.log_user_prompt=true".to_string(),
                "-c".to_string(),
                "otel.environment=\"tracer\"".to_string(),
            ];
            Some(TelemetryOn {
                env: Vec::new(),
                args,
                how: "-c otel.exporter and otel.log_user_prompt overrides",
            })
        }
        KnownAgent::Opencode | KnownAgent::QwenCode => None,
    }
}

/// What the first line says of the agent's own telemetry.
pub fn first_line_words(on: &Option<(KnownAgent, TelemetryOn)>, off: bool) -> String {
    match on {
        Some((agent, on)) => format!(
            "; {}'s own telemetry on, to tracer ({}; --no-agent-telemetry leaves it off)",
            agent.name(),
            on.how
        ),
        None if off => "; the agent's own telemetry left as it is".to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_gets_its_own_switches_and_the_others_none() {
        let claude = turn_on(KnownAgent::ClaudeCode, "http://127.0.0.1:9").expect("claude");
        let get = |name: &str| {
            claude
                .env
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("CLAUDE_CODE_ENABLE_TELEMETRY"), Some("1"));
        assert_eq!(
            get("OTEL_EXPORTER_OTLP_ENDPOINT"),
            Some("http://127.0.0.1:9")
        );
        assert_eq!(
            get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"),
            Some("http://127.0.0.1:9/v1/logs")
        );
        let codex = turn_on(KnownAgent::Codex, "http://127.0.0.1:9").expect("codex");
        assert!(codex.env.is_empty());
        assert!(
            codex
                .args
                .iter()
                .any(|a| a.contains("endpoint=\"http://127.0.0.1:9/v1/logs\""))
        );
        assert!(turn_on(KnownAgent::GeminiCli, "http://x").is_some());
        assert_eq!(turn_on(KnownAgent::Opencode, "http://x"), None);
    }
}
