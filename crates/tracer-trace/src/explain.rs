//! The teaching layer's words, as data: one row per case, a summary and an explanation template;
//! and the modules that pick a case for each message of a trace (`trace_messages` drives them).
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
    /// A bodiless request of no known dialect: its words say what came back.
    HttpPlainRequest,
    HttpResponse,
    McpServerStream,
    McpNoServerStream,
    McpEndSession,
    McpSessionEnded,
    McpSessionEndRefused,
    McpSessionLeft,
    Preconnect,
    PreconnectAnswered,
    Tunnel,
    TunnelClosed,
    InterceptHandshake,
    InterceptRefused,
    InFlight,
    Failed,
    CutOff,
    Aborted,
    /// Notes: sentences added under a message's explanation.
    NoteStreamRequested,
    NoteStreamReassembled,
    NoteOllamaTimings,
    NoteTruncated,
    NoteCutOff,
    NoteMalformed,
    /// Side requests and the dialects' own words (Gemini).
    CountTokens,
    TokenCount,
    ModelSideAnswer,
    NoteSideRequest,
    NoteSideCall,
    NoteGeminiThoughts,
    NoteGeminiSignature,
    CodeAssistCall,
    /// Words for another case in one API's own terms (`Explained::in_words_of`): a tool call
    /// as Anthropic's `tool_use` block, as the Responses API's `function_call` item.
    WordsToolUse,
    WordsFunctionCall,
    /// Notes in each API's own terms: thinking, what a request carries, how results go back.
    NoteTextBeforeCall,
    NoteThinking,
    NoteThinkingSigned,
    NoteHiddenReasoning,
    NoteSystemPrompt,
    NoteCacheMarks,
    NoteToolsOffered,
    NoteNewSince,
    NoteThinkingMode,
    NoteAdaptiveThinking,
    NoteHandoffToolMessage,
    NoteHandoffToolResult,
    NoteHandoffToolResultError,
    NoteHandoffFunctionOutput,
    NotePartlyDecoded,
    NoteStoppedReading,
    NoteStreamedOn,
    /// A WebSocket (`table_ws`): the upgrade, its messages, and Responses turns over it.
    WebSocketOpen,
    WebSocketClosed,
    NoteWsPrewarm,
    NoteWsPrevious,
    /// Hosts (`table_hosts`): a request to the host in a model API's shape, tool selection in the
    /// prompt, a conversation the host rewrote, the host's own housekeeping.
    HostModelRequest,
    NoteToolSelection,
    NoteHistoryRewritten,
    NoteHousekeeping,
    /// A coding agent's own call beside the model: its account, settings, feature flags or
    /// telemetry (`agent_endpoints`).
    AgentEndpoint,
    /// MCP beyond tools: the rows of `mcp::cases` (not in `ALL`: `McpCase::ALL` lists them).
    Mcp(McpCase),
}

impl Case {
    /// Every case, for checks that the table is complete.
    #[cfg(test)]
    pub(crate) const ALL: [Case; 88] = [
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
        Case::HttpPlainRequest,
        Case::HttpResponse,
        Case::McpServerStream,
        Case::McpNoServerStream,
        Case::McpEndSession,
        Case::McpSessionEnded,
        Case::McpSessionEndRefused,
        Case::McpSessionLeft,
        Case::Preconnect,
        Case::PreconnectAnswered,
        Case::Tunnel,
        Case::TunnelClosed,
        Case::InterceptHandshake,
        Case::InterceptRefused,
        Case::InFlight,
        Case::Failed,
        Case::CutOff,
        Case::Aborted,
        Case::NoteStreamRequested,
        Case::NoteStreamReassembled,
        Case::NoteOllamaTimings,
        Case::NoteTruncated,
        Case::NoteCutOff,
        Case::NoteMalformed,
        Case::CountTokens,
        Case::TokenCount,
        Case::ModelSideAnswer,
        Case::NoteSideRequest,
        Case::NoteSideCall,
        Case::NoteGeminiThoughts,
        Case::NoteGeminiSignature,
        Case::CodeAssistCall,
        Case::WordsToolUse,
        Case::WordsFunctionCall,
        Case::NoteTextBeforeCall,
        Case::NoteThinking,
        Case::NoteThinkingSigned,
        Case::NoteHiddenReasoning,
        Case::NoteSystemPrompt,
        Case::NoteCacheMarks,
        Case::NoteToolsOffered,
        Case::NoteNewSince,
        Case::NoteThinkingMode,
        Case::NoteAdaptiveThinking,
        Case::NoteHandoffToolMessage,
        Case::NoteHandoffToolResult,
        Case::NoteHandoffToolResultError,
        Case::NoteHandoffFunctionOutput,
        Case::NotePartlyDecoded,
        Case::NoteStoppedReading,
        Case::NoteStreamedOn,
        Case::WebSocketOpen,
        Case::WebSocketClosed,
        Case::NoteWsPrewarm,
        Case::NoteWsPrevious,
        Case::HostModelRequest,
        Case::NoteToolSelection,
        Case::NoteHistoryRewritten,
        Case::NoteHousekeeping,
        Case::AgentEndpoint,
    ];
}

mod agent_attrs;
pub mod agent_words;
pub(crate) mod describe;
pub(crate) mod describe_hosts;
pub(crate) mod describe_plain;
pub(crate) mod describe_streams;
pub(crate) mod dialect_words;
pub mod lanes;
pub mod mcp;
pub(crate) mod model_notes;
pub(crate) mod openapi_words;
mod table;
mod table_hosts;
mod table_terms;
mod table_ws;
pub mod timing;
pub(crate) mod trace_messages;
pub mod ws_lines;
pub(crate) mod ws_words;

pub(crate) use mcp::answer_cases::MCP_ANSWERS;
pub(crate) use mcp::cases::{MCP, McpCase};
pub(crate) use table::CASES;
pub(crate) use table_terms::TERMS;

/// Every row: the table's, then those in each API's own terms, then MCP's.
pub(crate) fn rows() -> impl Iterator<Item = &'static CaseText> {
    CASES
        .iter()
        .chain(TERMS)
        .chain(table_ws::WEBSOCKET)
        .chain(table_hosts::HOSTS)
        .chain(MCP)
        .chain(MCP_ANSWERS)
        .chain(mcp::tool_server_cases::TOOL_SERVERS)
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CaseText {
    pub case: Case,
    /// A stable name for exports (`tool_call`, `note_cut_off`).
    pub name: &'static str,
    pub summary: &'static str,
    pub explanation: &'static str,
}

impl Case {
    /// The case's stable name (from the table), e.g. `model_tool_call`.
    pub fn name(self) -> &'static str {
        case_text(self).map_or("unknown", |row| row.name)
    }
}

/// The table row of a case.
pub(crate) fn case_text(case: Case) -> Option<&'static CaseText> {
    rows().find(|row| row.case == case)
}

/// Replaces each `{name}` in a template by its value; unknown names are left as they are.
pub(crate) fn fill(template: &str, values: &[(&str, String)]) -> String {
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
    pub(crate) fn new(case: Case, values: &[(&str, String)]) -> Self {
        let (summary, explanation) = case_text(case)
            .map(|row| (fill(row.summary, values), fill(row.explanation, values)))
            .unwrap_or_default();
        Self {
            case,
            summary,
            explanation,
        }
    }

    /// The same case, its summary and explanation told in the words of another row (one API's
    /// own terms), with the same values.
    pub(crate) fn in_words_of(mut self, words: Case, values: &[(&str, String)]) -> Self {
        if let Some(row) = case_text(words) {
            self.summary = fill(row.summary, values);
            self.explanation = fill(row.explanation, values);
        }
        self
    }

    /// Adds a note's sentence to the explanation.
    pub(crate) fn note(&mut self, case: Case, values: &[(&str, String)]) {
        if let Some(row) = case_text(case) {
            if !self.explanation.is_empty() {
                self.explanation.push(' ');
            }
            self.explanation.push_str(&fill(row.explanation, values));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_and_format() {
        let explained = Explained::new(
            Case::ModelToolCall,
            &[
                ("calls", "append {\"content\":\"buy milk\"}".to_string()),
                ("said", String::new()),
            ],
        );
        assert_eq!(
            explained.summary,
            "the model asks for tool append {\"content\":\"buy milk\"} (it does not run it: the host will)"
        );
    }

    #[test]
    fn every_case_has_exactly_one_row() {
        assert_eq!(rows().count(), Case::ALL.len() + McpCase::ALL.len());
        for case in Case::ALL.into_iter().chain(McpCase::ALL.map(Case::Mcp)) {
            assert!(case_text(case).is_some(), "{case:?} has no row");
        }
        for row in rows() {
            let count = rows().filter(|r| r.case == row.case).count();
            assert_eq!(count, 1, "{:?}", row.case);
            let named = rows().filter(|r| r.name == row.name).count();
            assert_eq!(named, 1, "{}", row.name);
        }
        assert_eq!(Case::ModelToolCall.name(), "model_tool_call");
        assert!(case_text(Case::NoteMalformed).is_some());
        assert!(case_text(Case::AgentRequest).is_some());
    }
}
