//! The teaching layer's words, as data: one row per case, a summary and an explanation template.
//!
//! Templates name their values in braces (`{calls}`); `describe` picks the case and the values.

/// Every kind of message (and every note added under one) tracer knows how to explain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Case {
    AgentRequest,
    AgentReply,
    AgentError,
    ModelRequest,
    ModelRequestAgain,
    ModelLoad,
    ModelToolCall,
    ModelTextToolCall,
    ModelAnswer,
    ModelError,
    ModelEmpty,
    McpDiscover,
    McpInitialize,
    McpInitialized,
    McpToolsList,
    McpToolCall,
    McpOtherRequest,
    McpNotification,
    McpDiscoverResult,
    McpInitializeResult,
    McpToolsListResult,
    McpToolResult,
    McpToolError,
    McpInputRequired,
    McpProtocolError,
    McpAccepted,
    McpOtherResult,
    HttpRequest,
    HttpResponse,
    InFlight,
    Failed,
    Aborted,
    /// Notes: sentences added under a message's explanation.
    NoteStreamRequested,
    NoteStreamReassembled,
    NoteOllamaTimings,
    NoteTruncated,
    NoteCutOff,
    NoteMalformed,
}

impl Case {
    /// Every case, for checks that the table is complete.
    pub const ALL: [Case; 38] = [
        Case::AgentRequest,
        Case::AgentReply,
        Case::AgentError,
        Case::ModelRequest,
        Case::ModelRequestAgain,
        Case::ModelLoad,
        Case::ModelToolCall,
        Case::ModelTextToolCall,
        Case::ModelAnswer,
        Case::ModelError,
        Case::ModelEmpty,
        Case::McpDiscover,
        Case::McpInitialize,
        Case::McpInitialized,
        Case::McpToolsList,
        Case::McpToolCall,
        Case::McpOtherRequest,
        Case::McpNotification,
        Case::McpDiscoverResult,
        Case::McpInitializeResult,
        Case::McpToolsListResult,
        Case::McpToolResult,
        Case::McpToolError,
        Case::McpInputRequired,
        Case::McpProtocolError,
        Case::McpAccepted,
        Case::McpOtherResult,
        Case::HttpRequest,
        Case::HttpResponse,
        Case::InFlight,
        Case::Failed,
        Case::Aborted,
        Case::NoteStreamRequested,
        Case::NoteStreamReassembled,
        Case::NoteOllamaTimings,
        Case::NoteTruncated,
        Case::NoteCutOff,
        Case::NoteMalformed,
    ];
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct CaseText {
    pub case: Case,
    pub summary: &'static str,
    pub explanation: &'static str,
}

const fn row(case: Case, summary: &'static str, explanation: &'static str) -> CaseText {
    CaseText {
        case,
        summary,
        explanation,
    }
}

/// The table: every case, what its one-line summary says and how it is explained to a newcomer.
pub const CASES: &[CaseText] = &[
    row(
        Case::AgentRequest,
        "\"{text}\"",
        "You ask the host (the agent) in plain words. Everything numbered after this, until the reply, happens because of this one request.",
    ),
    row(
        Case::AgentReply,
        "reply: \"{text}\"{calls}",
        "The host answers you. The model wrote these words; the host ran the tools in between ({count} tool calls) and reports them.",
    ),
    row(
        Case::AgentError,
        "error: {error}",
        "The host could not finish your request; the message says why.",
    ),
    row(
        Case::ModelRequest,
        "{model}, {messages}, {tools}",
        "The host sends the conversation and the tools it offers to the model server. The model remembers nothing between calls: this body is everything it will see.",
    ),
    row(
        Case::ModelRequestAgain,
        "{model}, {messages} ({added} more than last time), {tools}",
        "The host re-sends the whole history: {count} messages now, {added} more than last time. The model is stateless; its \"memory\" is this list, kept by the host.",
    ),
    row(
        Case::ModelLoad,
        "load {model} (no messages)",
        "An empty conversation asks the model server only to load the model into memory (or, with keep_alive 0, to unload it); nothing is generated.",
    ),
    row(
        Case::ModelToolCall,
        "the model asks for tool {calls} (it does not run it: the host will)",
        "Function calling is the model side: the model wrote text asking for a tool and the model server parsed it into tool_calls. The model runs nothing; the host decides whether to call the tool.",
    ),
    row(
        Case::ModelTextToolCall,
        "the model writes a tool call as text: {calls}",
        "There is no tool_calls field: the model wrote the call inside its content ({form}). The model server did not parse it, so the host has to find and read it itself.",
    ),
    row(
        Case::ModelAnswer,
        "the model answers: \"{text}\"",
        "No tool calls in this reply, so the agent loop stops here and the host passes the text on.",
    ),
    row(
        Case::ModelError,
        "model server error: {error}",
        "The model server refused the request or failed while answering; no reply was generated.",
    ),
    row(
        Case::ModelEmpty,
        "empty reply (finish: {finish})",
        "The model server answered with neither text nor tool calls.",
    ),
    row(
        Case::McpDiscover,
        "server/discover",
        "The host asks the MCP server which protocol versions and capabilities it has: the stateless (2026-07-28) way to start, with no handshake and no session.",
    ),
    row(
        Case::McpInitialize,
        "initialize (protocol {version})",
        "The legacy handshake (MCP up to 2025-11-25): host and server agree on a protocol version and capabilities, and a session starts.",
    ),
    row(
        Case::McpInitialized,
        "notifications/initialized",
        "The host confirms the handshake. It is a notification: no id, no answer (just 202 Accepted).",
    ),
    row(
        Case::McpToolsList,
        "tools/list",
        "The host asks the MCP server which tools it has. The answer (names, descriptions, JSON Schemas) is what the host will describe to the model.",
    ),
    row(
        Case::McpToolCall,
        "tools/call {call}",
        "The host runs the tool the model asked for, on the MCP server. This is the only step that acts on the world.",
    ),
    row(
        Case::McpOtherRequest,
        "{method}",
        "A JSON-RPC request to the MCP server: one endpoint, and the operation is the body's method field.",
    ),
    row(
        Case::McpNotification,
        "{method} (notification)",
        "A JSON-RPC notification: it has no id and expects no answer.",
    ),
    row(
        Case::McpDiscoverResult,
        "speaks {versions}",
        "The server names the protocol versions and capabilities it supports.",
    ),
    row(
        Case::McpInitializeResult,
        "agreed on protocol {version}",
        "The server accepts the handshake; from now on the host sends its session id with every request.",
    ),
    row(
        Case::McpToolsListResult,
        "{count} tools: {names}",
        "Each tool comes with a plain-words description and a JSON Schema for its arguments: an API description written for a model, not a developer.",
    ),
    row(
        Case::McpToolResult,
        "result: \"{text}\"",
        "The tool ran. The host will paste this text into the conversation as a role: tool message for the model.",
    ),
    row(
        Case::McpToolError,
        "tool error: \"{text}\"",
        "A tool error (isError: true) is a normal result meant for the model: it can read the message, fix its call and retry.",
    ),
    row(
        Case::McpInputRequired,
        "input required",
        "The server needs more input before it can finish (2026-07-28 multi round-trip): the host must ask for it and retry with a new id.",
    ),
    row(
        Case::McpProtocolError,
        "JSON-RPC error {code}: {message}",
        "A protocol error (JSON-RPC error): the request itself was wrong, such as an unknown tool, bad params or wrong headers. It is for the developer; the model usually never sees it.",
    ),
    row(
        Case::McpAccepted,
        "{status} accepted, no body",
        "The server took the notification; nothing comes back.",
    ),
    row(
        Case::McpOtherResult,
        "result",
        "The MCP server answers the request.",
    ),
    row(
        Case::HttpRequest,
        "{detail}",
        "A request tracer does not read as a known dialect; its body is shown as it was.",
    ),
    row(
        Case::HttpResponse,
        "{detail}",
        "A response tracer does not read as a known dialect; its body is shown as it was.",
    ),
    row(
        Case::InFlight,
        "waiting for the response…",
        "The request was forwarded; its response has not finished yet.",
    ),
    row(
        Case::Failed,
        "no response: {error}",
        "The proxy could not get a response from the upstream (refused, unreachable or timed out); the caller got a 502 from tracer.",
    ),
    row(
        Case::Aborted,
        "aborted: {error}",
        "The caller went away before the response finished.",
    ),
    row(
        Case::NoteStreamRequested,
        "",
        "It asks for a streamed reply.",
    ),
    row(
        Case::NoteStreamReassembled,
        "",
        "It came as a stream of {records} records, reassembled here into the message they spell.",
    ),
    row(
        Case::NoteOllamaTimings,
        "",
        "Ollama's own timings: load {load}, prompt {prompt_tokens} tokens in {prompt_time}, output {output_tokens} tokens in {output_time} ({rate} tokens/s). Seen by the host: first byte after {first_byte}, done after {duration}.",
    ),
    row(
        Case::NoteTruncated,
        "",
        "Only the first {kept} of {total} bytes were kept; this reading is of that part.",
    ),
    row(
        Case::NoteCutOff,
        "",
        "The stream stopped before its end marker: the reply may be incomplete.",
    ),
    row(
        Case::NoteMalformed,
        "",
        "The body is not what its dialect should be: {detail}.",
    ),
];

/// The table row of a case.
pub fn case_text(case: Case) -> Option<&'static CaseText> {
    CASES.iter().find(|row| row.case == case)
}

/// Replaces each `{name}` in a template by its value; unknown names are left as they are.
pub fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out = template.to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// A message's explanation: the case it is, its one-line summary and its plain-words text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    pub case: Case,
    pub summary: String,
    pub explanation: String,
}

impl Explained {
    /// Explains a message as `case`, with the values its templates name.
    pub fn new(case: Case, values: &[(&str, String)]) -> Self {
        let (summary, explanation) = case_text(case)
            .map(|row| (fill(row.summary, values), fill(row.explanation, values)))
            .unwrap_or_default();
        Self {
            case,
            summary,
            explanation,
        }
    }

    /// Adds a note's sentence to the explanation.
    pub fn note(&mut self, case: Case, values: &[(&str, String)]) {
        if let Some(row) = case_text(case) {
            if !self.explanation.is_empty() {
                self.explanation.push(' ');
            }
            self.explanation.push_str(&fill(row.explanation, values));
        }
    }
}

/// A duration in nanoseconds for people: `0.4 ms`, `182 ms`, `4.88 s`.
pub fn human_duration(ns: i64) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// A text on one line, cut to `max` characters with an ellipsis.
pub fn shorten(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `1 message` / `3 messages`.
pub fn plural(count: usize, one: &str) -> String {
    if count == 1 {
        format!("{count} {one}")
    } else {
        format!("{count} {one}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_has_exactly_one_row() {
        assert_eq!(CASES.len(), Case::ALL.len());
        for case in Case::ALL {
            assert!(case_text(case).is_some(), "{case:?} has no row");
        }
        for row in CASES {
            let count = CASES.iter().filter(|r| r.case == row.case).count();
            assert_eq!(count, 1, "{:?}", row.case);
        }
        assert!(case_text(Case::NoteMalformed).is_some());
        assert!(case_text(Case::AgentRequest).is_some());
    }

    #[test]
    fn templates_fill_and_format() {
        let explained = Explained::new(
            Case::ModelToolCall,
            &[("calls", "append {\"content\":\"buy milk\"}".to_string())],
        );
        assert_eq!(
            explained.summary,
            "the model asks for tool append {\"content\":\"buy milk\"} (it does not run it: the host will)"
        );
        assert_eq!(human_duration(400_000), "0.4 ms");
        assert_eq!(human_duration(182_242_375), "182 ms");
        assert_eq!(human_duration(4_883_583_458), "4.88 s");
        assert_eq!(shorten("a  b\nc", 10), "a b c");
        assert_eq!(shorten("abcdefghijkl", 5), "abcd…");
        assert_eq!(plural(1, "tool"), "1 tool");
        assert_eq!(plural(5, "tool"), "5 tools");
    }
}
